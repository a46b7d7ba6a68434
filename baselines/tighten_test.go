package baselines

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/google/go-cmp/cmp"
)

func TestFileKeyNamesTheKeyEachCheckComparesWith(t *testing.T) {
	for metric, want := range map[string]string{
		checks.PerfE2E:                        "expected_e2e_ms",
		checks.PerfDenoiseAvg:                 "expected_avg_denoise_ms",
		checks.PerfDenoiseMedian:              "expected_median_denoise_ms",
		checks.PerfLoad:                       "expected_load_ms",
		"perf.stage.DenoisingStage":           "stages_ms.DenoisingStage",
		"perf.stage.per_frame_generation":     "",
		"perf.step.3":                         "",
		"memory.runtime_peak/server_reserved": "runtime_peak_vram_mb",
		"memory.runtime_peak/nvml_process":    "runtime_peak_vram_mb",
		"memory.runtime_peak/nvml_device":     "",
		"memory.load_peak/server_allocated":   "load_peak_allocated_mb",
		"memory.load_peak/host_anon":          "load_peak_host_anon_mb",
		"memory.warmup_peak/server_reserved":  "warmup_peak_vram_mb",
		"memory.warmup_peak/server_allocated": "",
		"consistency.ssim":                    "",
	} {
		if got := fileKey(metric); got != want {
			t.Errorf("fileKey(%q) = %q, want %q", metric, got, want)
		}
	}
}

// TestTightenChangesOnlyTheValuesGiven: SGLang's RTX 5090 file, two values tightened (one in
// a scenario, one in the top-level runtime_peak_vram_mb map): every other byte is the same.
func TestTightenChangesOnlyTheValuesGiven(t *testing.T) {
	path := filepath.Join("testdata", "sglang", "perf_baselines", "5090.json")
	base, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	const id = "flux_2_klein_base_image_t2i"
	got, err := Tighten(base, []Change{
		{Scenario: id, Metric: checks.PerfE2E, New: 15000.123},
		{Scenario: id, Metric: "memory.runtime_peak/server_reserved", New: 12000},
		{Scenario: id, Metric: "perf.stage.DenoisingStage", New: 9000},
	})
	if err != nil {
		t.Fatal(err)
	}
	oldDen, _ := base.Value(id, "perf.stage.DenoisingStage")
	want := []Change{
		{Scenario: id, Metric: "expected_e2e_ms", Old: 18255.39, New: 15000.12},
		{Scenario: id, Metric: "runtime_peak_vram_mb", Old: 13180, New: 12000},
		{Scenario: id, Metric: "stages_ms.DenoisingStage", Old: oldDen, New: 9000},
	}
	if diff := cmp.Diff(want, got.Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	before, after := strings.Split(string(base.Marshal()), "\n"), strings.Split(string(got.File.Marshal()), "\n")
	if len(before) != len(after) {
		t.Fatalf("%d lines became %d", len(before), len(after))
	}
	var changed []string
	for i := range before {
		if before[i] != after[i] {
			changed = append(changed, strings.TrimSpace(after[i]))
		}
	}
	wantLines := []string{`"DenoisingStage": 9000.0,`, `"expected_e2e_ms": 15000.12,`, `"` + id + `": 12000.0,`}
	if len(changed) != 3 {
		t.Fatalf("changed lines %q, want 3", changed)
	}
	for _, w := range wantLines {
		found := false
		for _, c := range changed {
			found = found || strings.HasPrefix(c, strings.TrimSuffix(w, ","))
		}
		if !found {
			t.Errorf("changed lines %q lack %q", changed, w)
		}
	}
	if v, _ := got.File.Value(id, checks.PerfE2E); v != 15000.12 {
		t.Errorf("the file reads back %g", v)
	}
}

func TestTightenRefusesWhatTheFileDoesNotHold(t *testing.T) {
	base, err := Load(filepath.Join("testdata", "sglang", "perf_baselines", "h100.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		set  []Change
		want string
	}{
		{"unknown scenario", []Change{{Scenario: "nope", Metric: checks.PerfE2E, New: 1}}, "not a value of"},
		{"a key the scenario lacks", []Change{{Scenario: "qwen_image_t2i", Metric: checks.PerfLoad, New: 1}}, "not a value of"},
		{"two metrics, one key", []Change{{Scenario: "qwen_image_t2i", Metric: checks.PerfE2E, New: 1},
			{Scenario: "qwen_image_t2i", Metric: checks.PerfE2E, New: 2}}, "both set expected_e2e_ms"},
		{"not a measurement", []Change{{Scenario: "qwen_image_t2i", Metric: checks.PerfE2E, New: math.NaN()}}, "not a measurement"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Tighten(base, tc.set); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
