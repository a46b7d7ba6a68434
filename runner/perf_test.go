package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

func TestLoadPerf(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "perf")
	if err := os.Mkdir(missing, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &suite.Suite{Baselines: missing}
	// A folder of <gpu>.json without a GPU class cannot be resolved.
	if _, err := loadPerf(Options{Suite: s, Mode: "check"}); err == nil || !strings.Contains(err.Error(), "GPU class is unknown") {
		t.Errorf("no gpu: %v", err)
	}
	// Check mode needs the file; baseline mode may be making it.
	if _, err := loadPerf(Options{Suite: s, Mode: "check", GPU: "H100"}); err == nil || !strings.Contains(err.Error(), filepath.Join(missing, "h100.json")) {
		t.Errorf("check mode, no file: %v", err)
	}
	p, err := loadPerf(Options{Suite: s, Mode: ModeBaseline, GPU: "h100"})
	if err != nil || p.File != nil || p.Enforce {
		t.Errorf("baseline mode, no file: %+v %v", p, err)
	}
	// A bad known-failures file is reported with the baseline problem, at once.
	known := filepath.Join(dir, "known.yaml")
	if err := os.WriteFile(known, []byte("- case: a\n  check: b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.KnownFailures = known
	_, err = loadPerf(Options{Suite: s, Mode: "check", GPU: "h100"})
	if err == nil || !strings.Contains(err.Error(), "h100.json") || !strings.Contains(err.Error(), "known.yaml:1: known_failures[0].reason: missing") {
		t.Errorf("both problems: %v", err)
	}
	// No baselines configured: nothing collected, growth still watched with the defaults.
	p, err = loadPerf(Options{Suite: &suite.Suite{}, Mode: "check"})
	if err != nil || p.File != nil || !p.Enforce || p.Tol.RuntimePeakVRAM != 0.02 {
		t.Errorf("no baselines: %+v %v", p, err)
	}
}

// The runner hands the checks what the baseline file alone does not say: the case's
// num_frames (per-frame check), the AMD mode from the GPU class, and the warm-up peak.
func TestPerfWiring(t *testing.T) {
	dir := t.TempDir()
	const file = `{"tolerances": {"pr_test": {"e2e": 0.25, "denoise_stage": 0.25, "non_denoise_stage": 0.8, "denoise_step": 0.3, "denoise_agg": 0.2}},
 "sampling": {"step_fractions": [0.0, 1.0]},
 "scenarios": {"v": {"stages_ms": {"DenoisingStage": 1000.0, "per_frame_generation": 100.0}, "denoise_step_ms": {"0": 10.0, "1": 10.0},
   "expected_e2e_ms": 1600.0, "expected_avg_denoise_ms": 10.0, "expected_median_denoise_ms": 10.0, "warmup_peak_vram_mb": 1000.0}}}`
	for _, gpu := range []string{"h100", "mi300x"} {
		if err := os.WriteFile(filepath.Join(dir, gpu+".json"), []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := &suite.Case{ID: "v", Modality: suite.Video, Request: suite.Request{NumFrames: 16}}
	// 8000 ms / 16 frames = 500 ms a frame: over 100 × 1.25 (h100), over 100 × 2 (AMD).
	rr := results.RequestResult{ServerTotalMs: 8000, Stages: results.Stages{{Name: "DenoisingStage", Ms: 900}}, StepsMs: []float64{10, 10}}
	// The warm-up peak is over its limit: a failure on CUDA, recorded without a verdict on
	// AMD, where SGLang checks no VRAM (test_server_common.py @ a7ec6b97f786).
	for _, tt := range []struct {
		gpu        string
		frame, e2e results.Status
		warning    bool
		warm       results.Status
	}{
		{"h100", results.Fail, results.Fail, false, results.Fail},
		{"mi300x", results.Pass, results.Pass, true, results.Skip},
	} {
		p, err := loadPerf(Options{Suite: &suite.Suite{Baselines: dir}, Mode: "check", GPU: tt.gpu})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]results.Check{}
		for _, ck := range p.Request(judge.Input{Case: c, Request: rr, Answered: true}).Request.Checks {
			got[ck.Name] = ck
		}
		frame, e2e := got[checks.PerfPerFrame], got[checks.PerfE2E]
		if frame.Status != tt.frame || e2e.Status != tt.e2e || strings.HasPrefix(frame.Note, "warning:") != tt.warning {
			t.Errorf("%s: per frame %s %q, e2e %s", tt.gpu, frame.Status, frame.Note, e2e.Status)
		}
		if frame.Value == nil || *frame.Value != 500 {
			t.Errorf("%s: per-frame value %v, want 8000 / 16", tt.gpu, frame.Value)
		}
		cr := results.CaseResult{ID: "v", Load: &results.Load{DurationMs: 10, WarmupPeakVRAMMiB: map[string]float64{checks.SourceServerReserved: 1129}}}
		cr.Checks = p.Case(c, cr)
		var warm *results.Check
		for i, ck := range cr.Checks {
			if ck.Name == checks.MemoryWarmupPeak {
				warm = &cr.Checks[i]
			}
		}
		if warm == nil || warm.Status != tt.warm || *warm.Limit != 1128 {
			t.Errorf("%s: warm-up peak 1129 MiB against 1000 + 128: %+v", tt.gpu, warm)
		}
		// The scenario has no load or runtime peak VRAM baseline: on CUDA a failure per
		// missing key (test_server_common.py @ a7ec6b97f786, _validate_and_record); off CUDA
		// no VRAM verdict at all.
		var missing []string
		for _, ck := range cr.Checks {
			if ck.Status == results.Fail && strings.Contains(ck.Detail, "is missing a load/runtime peak VRAM baseline") {
				missing = append(missing, ck.Name)
			}
		}
		want := []string{checks.MemoryLoadPeak, checks.MemoryRuntimePeak}
		if tt.gpu == "mi300x" {
			want = nil
		}
		if !slices.Equal(missing, want) {
			t.Errorf("%s: missing VRAM baseline failures %v, want %v", tt.gpu, missing, want)
		}
	}
}
