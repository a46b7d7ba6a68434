//go:build cgo

package gpumem

import (
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/memory"
	"github.com/diffusion-check/diffusion-check/results"
)

func TestDescribe(t *testing.T) {
	dev := func(name, uuid string, ret nvml.Return) *mock.Device {
		return &mock.Device{
			GetNameFunc: func() (string, nvml.Return) { return name, nvml.SUCCESS },
			GetUUIDFunc: func() (string, nvml.Return) { return uuid, ret },
		}
	}
	withVersions := func(lib *mock.Interface, cuda int, ret nvml.Return) *mock.Interface {
		lib.SystemGetDriverVersionFunc = func() (string, nvml.Return) { return "570.124.06", nvml.SUCCESS }
		lib.SystemGetCudaDriverVersionFunc = func() (int, nvml.Return) { return cuda, ret }
		return lib
	}
	for _, tc := range []struct {
		name string
		lib  *mock.Interface
		want results.Machine
	}{
		{
			name: "two GPUs",
			lib:  withVersions(library(dev("NVIDIA H200", "GPU-0a", nvml.SUCCESS), dev("NVIDIA H200", "GPU-1b", nvml.SUCCESS)), 12080, nvml.SUCCESS),
			want: results.Machine{Driver: "570.124.06", CUDA: "12.8",
				GPUs: []results.MachineGPU{{Index: 0, Name: "NVIDIA H200", UUID: "GPU-0a"}, {Index: 1, Name: "NVIDIA H200", UUID: "GPU-1b"}}},
		},
		{
			name: "failed calls are named, the rest kept",
			lib:  withVersions(library(dev("NVIDIA B200", "", nvml.ERROR_UNKNOWN)), 0, nvml.ERROR_NOT_SUPPORTED),
			want: results.Machine{Driver: "570.124.06", GPUs: []results.MachineGPU{{Index: 0, Name: "NVIDIA B200"}},
				NVMLNote: "nvml: CUDA version: " + nvml.ERROR_NOT_SUPPORTED.Error() + "; GPU 0 UUID: " + nvml.ERROR_UNKNOWN.Error()},
		},
		{
			name: "no driver",
			lib:  &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }},
			want: results.Machine{NVMLNote: "nvml unavailable: init: " + nvml.ERROR_LIBRARY_NOT_FOUND.Error()},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proc := fakeProc(t)
			if err := os.WriteFile(filepath.Join(proc, "cpuinfo"), []byte("processor\t: 0\nmodel name\t: Test CPU 9000\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			tc.want.CPU = "Test CPU 9000"
			s := New(Options{library: tc.lib, procDir: proc, timer: timerRuntime})
			defer s.Close()
			var m results.Machine
			s.Describe(&m)
			if d := cmp.Diff(tc.want, m); d != "" {
				t.Errorf("Describe (-want +got):\n%s", d)
			}
		})
	}
}

func TestCUDAVersion(t *testing.T) {
	for v, want := range map[int]string{12080: "12.8", 11080: "11.8", 12100: "12.10", 13000: "13.0"} {
		if got := cudaVersion(v); got != want {
			t.Errorf("cudaVersion(%d) = %q, want %q", v, got, want)
		}
	}
}

// TestTimelineHoldsTheSpike: the session's timeline holds the 2 ms spike at the sampler's
// resolution (device and per-process memory, host memory as last read), and a copy.
func TestTimelineHoldsTheSpike(t *testing.T) {
	proc := fakeProc(t)
	synctest.Test(t, func(t *testing.T) {
		g := &gpu{start: time.Now(), base: 4 * gib, spike: 20 * gib, spikeFrom: 10 * time.Millisecond, spikeTo: 12 * time.Millisecond}
		s := New(Options{library: library(g.device()), procDir: proc, timer: timerRuntime})
		defer s.Close()
		sess, err := s.start(t.Context(), 100)
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Stop()
		w := sess.Window()
		time.Sleep(20 * time.Millisecond)
		w.End()
		tl := sess.Timeline()
		if tl.Width != 0 || tl.Interval != time.Millisecond || tl.Samples < 20 {
			t.Fatalf("width %s, interval %s, %d samples: want full resolution at 1 ms", tl.Width, tl.Interval, tl.Samples)
		}
		type step struct {
			At              time.Duration
			Dev, Proc, Host float32
		}
		var got []step
		for _, p := range tl.Points {
			got = append(got, step{p.At, p.MiB[memory.TimelineDevice], p.MiB[memory.TimelineProcess], p.MiB[memory.TimelineHost]})
		}
		// The process list is queried when the device counter rises, not when it falls: the
		// per-process line holds the spike until the window's last (full) sample.
		want := []step{{0, 9 * 1024, 4 * 1024, 4}, {10 * time.Millisecond, 29 * 1024, 24 * 1024, 4}, {12 * time.Millisecond, 9 * 1024, 24 * 1024, 4},
			{20 * time.Millisecond, 9 * 1024, 4 * 1024, 4}}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("timeline (-want +got):\n%s", d)
		}
	})
}
