//go:build cgo

// The tests with go-nvml's mock need cgo, as go-nvml does; nocgo_test.go covers a build
// without it.

package gpumem

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/diffusion-check/diffusion-check/internal/memory"
)

const gib = 1 << 30

// gpu is a mock GPU whose memory follows the fake clock: the server's worker holds base,
// plus spike between spikeFrom and spikeTo after start; an unrelated process holds 5 GiB.
type gpu struct {
	start              time.Time
	base, spike        uint64
	spikeFrom, spikeTo time.Duration
	procRet            nvml.Return
	procUsed           uint64 // overrides the worker's usage when set (e.g. not available)
	cost               time.Duration
	mu                 sync.Mutex
	calls              []time.Duration // when GetMemoryInfo was called, after start
	procCalls          []time.Duration // when GetComputeRunningProcesses was called
	procs              []nvml.ProcessInfo
	// other is what the unrelated process holds at a time after start; nil: 5 GiB.
	other func(time.Duration) uint64
}

func (g *gpu) otherUsed() uint64 {
	if g.other == nil {
		return 5 * gib
	}
	return g.other(time.Since(g.start))
}

func (g *gpu) used() uint64 {
	at := time.Since(g.start)
	if at >= g.spikeFrom && at < g.spikeTo {
		return g.base + g.spike
	}
	return g.base
}

func (g *gpu) device() *mock.Device {
	g.procs = make([]nvml.ProcessInfo, 2)
	return &mock.Device{
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			g.mu.Lock()
			g.calls = append(g.calls, time.Since(g.start))
			cost := g.cost
			g.mu.Unlock()
			if cost > 0 {
				time.Sleep(cost) // advances the fake clock: a slow sample
			}
			return nvml.Memory{Total: 140 * gib, Used: g.used() + g.otherUsed()}, nvml.SUCCESS
		},
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			g.mu.Lock()
			g.procCalls = append(g.procCalls, time.Since(g.start))
			g.mu.Unlock()
			if g.procRet != nvml.SUCCESS {
				return nil, g.procRet
			}
			u := g.used()
			if g.procUsed != 0 {
				u = g.procUsed
			}
			g.procs[0] = nvml.ProcessInfo{Pid: 101, UsedGpuMemory: u}
			g.procs[1] = nvml.ProcessInfo{Pid: 200, UsedGpuMemory: g.otherUsed()}
			return g.procs, nvml.SUCCESS
		},
	}
}

func library(devs ...nvml.Device) *mock.Interface {
	return &mock.Interface{
		InitFunc:           func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:       func() nvml.Return { return nvml.SUCCESS },
		DeviceGetCountFunc: func() (int, nvml.Return) { return len(devs), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			return devs[i], nvml.SUCCESS
		},
	}
}

func TestDeviceNames(t *testing.T) {
	named := func(name string, ret nvml.Return) *mock.Device {
		return &mock.Device{GetNameFunc: func() (string, nvml.Return) { return name, ret }}
	}
	s := New(Options{library: library(named("NVIDIA H200", nvml.SUCCESS), named("", nvml.ERROR_UNKNOWN)), procDir: fakeProc(t), timer: timerRuntime})
	defer s.Close()
	if got := s.DeviceNames(); len(got) != 2 || got[0] != "NVIDIA H200" || got[1] != "" {
		t.Errorf("DeviceNames() = %q, want [NVIDIA H200, \"\"]", got)
	}
	none := New(Options{library: &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}, procDir: fakeProc(t), timer: timerRuntime})
	if got := none.DeviceNames(); len(got) != 0 {
		t.Errorf("without NVML: DeviceNames() = %q, want none", got)
	}
}

func TestPeaksPerWindow(t *testing.T) {
	proc := fakeProc(t)
	synctest.Test(t, func(t *testing.T) {
		g := &gpu{start: time.Now(), base: 4 * gib, spike: 20 * gib, spikeFrom: 10 * time.Millisecond, spikeTo: 12 * time.Millisecond}
		s := New(Options{library: library(g.device()), procDir: proc, timer: timerRuntime})
		defer s.Close()
		if s.Unavailable() != "" {
			t.Fatal(s.Unavailable())
		}
		sess, err := s.Start(t.Context(), 100)
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Stop()
		whole := sess.Window()
		time.Sleep(20 * time.Millisecond)
		late := sess.Window() // overlaps whole, opens after the spike
		time.Sleep(5 * time.Millisecond)
		gotLate, gotWhole := late.End(), whole.End()
		if again := whole.End(); !cmp.Equal(again, gotWhole) {
			t.Errorf("second End differs: %v", cmp.Diff(gotWhole, again))
		}
		wantWhole := map[string]float64{checks.SourceNVMLProcess: 24 * 1024, checks.SourceNVMLDevice: 29 * 1024, checks.SourceHostAnon: 4}
		if diff := cmp.Diff(wantWhole, gotWhole.MiB); diff != "" {
			t.Errorf("window over the spike (-want +got):\n%s", diff)
		}
		wantLate := map[string]float64{checks.SourceNVMLProcess: 4 * 1024, checks.SourceNVMLDevice: 9 * 1024, checks.SourceHostAnon: 4}
		if diff := cmp.Diff(wantLate, gotLate.MiB); diff != "" {
			t.Errorf("window after the spike (-want +got):\n%s", diff)
		}
		// 25 ms at 1 ms plus the samples at open and end.
		if gotWhole.Samples < 26 || len(gotWhole.Notes) != 0 {
			t.Errorf("whole window: %d samples, notes %q", gotWhole.Samples, gotWhole.Notes)
		}
	})
}

// TestDriftFree checks the absolute schedule: samples that take 0.3 ms do not delay later
// ticks, and samples that take 2.5 ms skip the ticks they overran instead of bunching up.
func TestDriftFree(t *testing.T) {
	proc := fakeProc(t)
	for _, tc := range []struct {
		cost       time.Duration
		wantAt     []time.Duration
		wantMissed int
	}{
		{300 * time.Microsecond, []time.Duration{1, 2, 3, 4, 5, 6}, 0},
		{2500 * time.Microsecond, []time.Duration{1, 4, 7, 10}, 2},
	} {
		synctest.Test(t, func(t *testing.T) {
			g := &gpu{start: time.Now(), base: gib}
			s := New(Options{library: library(g.device()), procDir: proc, timer: timerRuntime, hostInterval: time.Hour})
			sess, err := s.start(t.Context(), 100)
			if err != nil {
				t.Fatal(err)
			}
			w := sess.Window() // ticks sample only while a window is open
			defer w.End()
			g.mu.Lock()
			g.calls, g.start, g.cost = nil, time.Now(), tc.cost // ignore the samples taken by start and Window
			g.mu.Unlock()
			time.Sleep(tc.wantAt[len(tc.wantAt)-1]*time.Millisecond + 100*time.Microsecond)
			sess.Stop() // first: a sample sleeping with the lock held would block Stats
			st := sess.Stats()
			g.mu.Lock()
			defer g.mu.Unlock()
			var want []time.Duration
			for _, ms := range tc.wantAt {
				want = append(want, ms*time.Millisecond)
			}
			got := g.calls
			if diff := cmp.Diff(want, got[:min(len(got), len(want))]); diff != "" {
				t.Errorf("cost %s: sample times (-want +got):\n%s", tc.cost, diff)
			}
			if tc.wantMissed > 0 && st.Missed < tc.wantMissed {
				t.Errorf("cost %s: %d ticks counted as missed, want ≥ %d", tc.cost, st.Missed, tc.wantMissed)
			}
		})
	}
}

// TestProcessQueryTrigger: the device counter is read every tick, the process list only at a
// window's open and end, every ProcessInterval while the counter is flat, and on the tick where
// the counter rises: the 2 ms spike's per-process peak is still caught.
func TestProcessQueryTrigger(t *testing.T) {
	proc := fakeProc(t)
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		g := &gpu{start: time.Now(), base: 4 * gib, spike: 20 * gib, spikeFrom: 120*ms + 500*time.Microsecond, spikeTo: 122*ms + 500*time.Microsecond}
		s := New(Options{library: library(g.device()), procDir: proc, timer: timerRuntime, hostInterval: time.Hour, processInterval: 50 * ms})
		sess, err := s.start(t.Context(), 100)
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Stop()
		w := sess.Window()
		time.Sleep(160*ms + 500*time.Microsecond)
		got := w.End()
		st := sess.Stats()
		g.mu.Lock()
		defer g.mu.Unlock()
		// start, window open, periodic at 50 and 100, the rise at 121, periodic at 150, end.
		want := []time.Duration{0, 0, 50 * ms, 100 * ms, 121 * ms, 150 * ms, 160*ms + 500*time.Microsecond}
		if diff := cmp.Diff(want, g.procCalls); diff != "" {
			t.Errorf("per-process queries at (-want +got):\n%s", diff)
		}
		if n := len(g.calls); n < 162 {
			t.Errorf("%d device counter reads, want one per tick (≥ 162)", n)
		}
		if diff := cmp.Diff(map[string]float64{checks.SourceNVMLProcess: 24 * 1024, checks.SourceNVMLDevice: 29 * 1024, checks.SourceHostAnon: 4},
			got.MiB); diff != "" {
			t.Errorf("peaks (-want +got):\n%s", diff)
		}
		if st.RiseQueries != 1 {
			t.Errorf("%d queries triggered by a rise, want 1", st.RiseQueries)
		}
	})
}

// TestProcessSwapMissed pins down what the trigger cannot see (docs/gpu.md): another process
// frees what ours allocates within one tick, so the device counter stays flat; our peak is
// caught only if it is still held at the next periodic query.
func TestProcessSwapMissed(t *testing.T) {
	proc := fakeProc(t)
	for _, tc := range []struct {
		hold     time.Duration
		wantProc float64
	}{
		{3 * time.Millisecond, 4 * 1024},  // gone before the query at 50 ms: missed
		{60 * time.Millisecond, 6 * 1024}, // held across 50 ms: caught there
	} {
		synctest.Test(t, func(t *testing.T) {
			from := 10*time.Millisecond + 500*time.Microsecond
			g := &gpu{start: time.Now(), base: 4 * gib, spike: 2 * gib, spikeFrom: from, spikeTo: from + tc.hold}
			g.other = func(at time.Duration) uint64 {
				if at >= from && at < from+tc.hold {
					return 3 * gib
				}
				return 5 * gib
			}
			s := New(Options{library: library(g.device()), procDir: proc, timer: timerRuntime, hostInterval: time.Hour, processInterval: 50 * time.Millisecond})
			sess, err := s.start(t.Context(), 100)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Stop()
			w := sess.Window()
			time.Sleep(80 * time.Millisecond)
			got := w.End()
			want := map[string]float64{checks.SourceNVMLProcess: tc.wantProc, checks.SourceNVMLDevice: 9 * 1024, checks.SourceHostAnon: 4}
			if diff := cmp.Diff(want, got.MiB); diff != "" {
				t.Errorf("held %s: peaks (-want +got):\n%s", tc.hold, diff)
			}
		})
	}
}

// TestMultiGPURise: when GPU 0 rises, GPU 1, whose counter fell since its last query, is
// queried too, so the summed per-process peak is not built from a stale, higher value.
func TestMultiGPURise(t *testing.T) {
	proc := fakeProc(t)
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		g0 := &gpu{start: time.Now(), base: 2 * gib, spike: 4 * gib, spikeFrom: 10*ms + 500*time.Microsecond, spikeTo: 12*ms + 500*time.Microsecond}
		g1 := &gpu{start: time.Now(), base: 2 * gib, spike: 1 * gib, spikeTo: 5*ms + 500*time.Microsecond} // frees 1 GiB at 5.5 ms
		s := New(Options{library: library(g0.device(), g1.device()), procDir: proc, timer: timerRuntime, hostInterval: time.Hour, processInterval: 50 * ms})
		sess, err := s.start(t.Context(), 100)
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Stop()
		w := sess.Window()
		time.Sleep(20 * ms)
		got := w.End()
		want := map[string]float64{
			checks.SourceNVMLProcess: 8 * 1024, checks.SourceNVMLProcess + ":0": 6 * 1024, checks.SourceNVMLProcess + ":1": 3 * 1024,
			checks.SourceNVMLDevice: 18 * 1024, checks.SourceNVMLDevice + ":0": 11 * 1024, checks.SourceNVMLDevice + ":1": 8 * 1024,
			checks.SourceHostAnon: 4,
		}
		if diff := cmp.Diff(want, got.MiB); diff != "" {
			t.Errorf("peaks (-want +got):\n%s", diff)
		}
		g1.mu.Lock()
		defer g1.mu.Unlock()
		if diff := cmp.Diff([]time.Duration{0, 0, 11 * ms, 20 * ms}, g1.procCalls); diff != "" {
			t.Errorf("GPU 1 queried at (-want +got):\n%s", diff)
		}
	})
}

func TestUnavailable(t *testing.T) {
	lib := &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}
	s := New(Options{library: lib, procDir: fakeProc(t), timer: timerRuntime})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	hostOnly(t, s, "ERROR_LIBRARY_NOT_FOUND")
}

// TestDegraded covers the per-process query refused or not answered: nvml_process is left
// out with a note, nvml_device stays.
func TestDegraded(t *testing.T) {
	proc := fakeProc(t)
	for name, g := range map[string]*gpu{
		"no permission": {base: gib, procRet: nvml.ERROR_NO_PERMISSION},
		"not available": {base: gib, procUsed: notAvailable},
	} {
		t.Run(name, func(t *testing.T) {
			g.start = time.Now()
			s := New(Options{library: library(g.device()), procDir: proc, timer: timerRuntime})
			sess, err := s.Start(t.Context(), 100)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Stop()
			p := sess.Window().End()
			if diff := cmp.Diff(map[string]float64{checks.SourceNVMLDevice: 6 * 1024, checks.SourceHostAnon: 4}, p.MiB); diff != "" {
				t.Errorf("peaks (-want +got):\n%s", diff)
			}
			if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "nvml_device only") {
				t.Errorf("notes %q", p.Notes)
			}
		})
	}
}

func TestMultiGPU(t *testing.T) {
	proc := fakeProc(t)
	g0 := &gpu{start: time.Now(), base: 2 * gib}
	g1 := &gpu{start: time.Now(), base: 3 * gib}
	s := New(Options{library: library(g0.device(), g1.device()), procDir: proc, timer: timerRuntime})
	sess, err := s.Start(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Stop()
	want := map[string]float64{
		checks.SourceNVMLProcess: 5 * 1024, checks.SourceNVMLProcess + ":0": 2 * 1024, checks.SourceNVMLProcess + ":1": 3 * 1024,
		checks.SourceNVMLDevice: 15 * 1024, checks.SourceNVMLDevice + ":0": 7 * 1024, checks.SourceNVMLDevice + ":1": 8 * 1024,
		checks.SourceHostAnon: 4,
	}
	if diff := cmp.Diff(want, sess.Window().End().MiB); diff != "" {
		t.Errorf("peaks (-want +got):\n%s", diff)
	}
}

// TestNoTreeProcessOnGPU: a server that holds no GPU memory (or whose PIDs NVML reports in
// another namespace) gets no nvml_process number, and a note that says why.
func TestNoTreeProcessOnGPU(t *testing.T) {
	proc := fakeProc(t)
	g := &gpu{start: time.Now(), base: gib}
	s := New(Options{library: library(g.device()), procDir: proc, timer: timerRuntime})
	sess, err := s.Start(t.Context(), 300) // holds no GPU memory
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Stop()
	p := sess.Window().End()
	if _, ok := p.MiB[checks.SourceNVMLProcess]; ok {
		t.Errorf("peaks %v: want no %s", p.MiB, checks.SourceNVMLProcess)
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "nvml_process: no process of the server's tree (pid 300") {
		t.Errorf("notes %q", p.Notes)
	}
	if _, err := s.Start(t.Context(), 0); err == nil {
		t.Error("Start(0): want an error")
	}
}

// TestSampleAllocs: the sampler's own code allocates nothing per sample (the mock returns a
// reused slice; go-nvml's real query allocates its result, see docs/gpu.md).
func TestSampleAllocs(t *testing.T) {
	proc := fakeProc(t)
	g := &gpu{start: time.Now(), base: gib}
	s := New(Options{library: library(g.device()), procDir: proc, timer: timerRuntime, hostInterval: time.Nanosecond})
	sess, err := s.start(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Stop()
	w := sess.Window()
	defer w.End()
	// The session's own sampler goroutine appends to g.calls too: under g.mu, like it.
	g.mu.Lock()
	g.calls = make([]time.Duration, 0, 10000)
	g.mu.Unlock()
	allocs := testing.AllocsPerRun(1000, func() {
		sess.mu.Lock()
		sess.sampleLocked(time.Now(), true)
		sess.mu.Unlock()
	})
	if allocs != 0 {
		t.Errorf("%v allocations per sample, want 0", allocs)
	}
}

var _ memory.Session = (*Session)(nil)

// TestVisibleDevices: the sampler samples the GPUs CUDA_VISIBLE_DEVICES gives the runner, in
// its order, by index or UUID (prefix), and stops at the first entry that names none, as CUDA
// does; empty or a MIG instance samples every GPU; a value naming none leaves NVML unused,
// saying so.
func TestVisibleDevices(t *testing.T) {
	devs := make([]nvml.Device, 4)
	for i := range devs {
		uuid := fmt.Sprintf("GPU-%d%d%d%d-aaaa", i, i, i, i)
		name := fmt.Sprintf("gpu%d", i)
		devs[i] = &mock.Device{
			GetNameFunc: func() (string, nvml.Return) { return name, nvml.SUCCESS },
			GetUUIDFunc: func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
		}
	}
	for _, tc := range []struct {
		visible string
		want    []string
		why     string
	}{
		{"", []string{"gpu0", "gpu1", "gpu2", "gpu3"}, ""},
		{"2", []string{"gpu2"}, ""},
		{"3, 1", []string{"gpu3", "gpu1"}, ""},
		{"GPU-2222-aaaa", []string{"gpu2"}, ""},
		{"GPU-11,0", []string{"gpu1", "gpu0"}, ""},
		{"1,7,2", []string{"gpu1"}, ""},
		{"1,1", []string{"gpu1"}, ""},
		{"MIG-0f1e2d3c-0000-0000-0000-000000000000", []string{"gpu0", "gpu1", "gpu2", "gpu3"}, ""},
		{"GPU-", nil, "CUDA_VISIBLE_DEVICES=GPU- names none of the 4 GPUs"},
		{"-1", nil, "CUDA_VISIBLE_DEVICES=-1 names none of the 4 GPUs"},
	} {
		s := New(Options{library: library(devs...), procDir: fakeProc(t), timer: timerRuntime, Visible: tc.visible})
		if got := s.DeviceNames(); !cmp.Equal(got, tc.want, cmpopts.EquateEmpty()) || !strings.Contains(s.Unavailable(), tc.why) {
			t.Errorf("Visible %q: sampled %q (unavailable %q), want %q (%q)", tc.visible, got, s.Unavailable(), tc.want, tc.why)
		}
		s.Close()
	}
}
