//go:build gpu && cgo

package gpumem

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/memory"
	"github.com/diffusion-check/diffusion-check/results"
)

// TestGPUMachine: on a real GPU, Describe names the driver, the CUDA version and every GPU's
// name and UUID, as nvidia-smi does (docs/gpu-validation/machine-describe.txt), and a
// session's timeline holds device memory at 1 ms:
//
//	go test -tags gpu -run TestGPUMachine -v ./internal/gpumem
func TestGPUMachine(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	if why := s.Unavailable(); why != "" {
		t.Fatalf("NVML unavailable: %s", why)
	}
	var m results.Machine
	s.Describe(&m)
	out, _ := json.MarshalIndent(m, "", "  ")
	t.Logf("machine: %s", out)
	if !regexp.MustCompile(`^\d+\.\d+(\.\d+)?$`).MatchString(m.Driver) || !regexp.MustCompile(`^\d+\.\d+$`).MatchString(m.CUDA) || m.NVMLNote != "" {
		t.Errorf("driver %q, CUDA %q, note %q: want versions and no note", m.Driver, m.CUDA, m.NVMLNote)
	}
	if len(m.GPUs) != s.Devices() || len(m.GPUs) == 0 {
		t.Fatalf("%d GPUs described, %d sampled", len(m.GPUs), s.Devices())
	}
	for _, g := range m.GPUs {
		if !strings.HasPrefix(g.UUID, "GPU-") || g.Name == "" {
			t.Errorf("GPU %d: name %q, UUID %q: want a name and GPU-…", g.Index, g.Name, g.UUID)
		}
	}
	if m.CPU == "" {
		t.Error("no CPU model from /proc/cpuinfo")
	}
	sess, err := s.Start(t.Context(), os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	w := sess.Window()
	time.Sleep(200 * time.Millisecond) // a real GPU: the sampler's own ticks are what is measured
	w.End()
	sess.Stop()
	tl := sess.(memory.Recorder).Timeline()
	t.Logf("timeline: %d samples, %d points, interval %s, bucket %s, first %+v", tl.Samples, len(tl.Points), tl.Interval, tl.Width, tl.Points[0])
	if tl.Samples < 100 || !tl.Points[0].Has[memory.TimelineDevice] {
		t.Errorf("timeline of 200 ms at 1 ms: %d samples, first point %+v: want ≥ 100 samples with device memory", tl.Samples, tl.Points[0])
	}
}
