package baselines

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/golden"
	"github.com/diffusion-check/diffusion-check/results"

	"github.com/google/go-cmp/cmp"
)

const existing = `{
    "metadata": {
        "model": "Diffusion Server",
        "hardware": "CI RTX 5090 pool",
        "last_updated": "2026-08-16"
    },
    "tolerances": {
        "pr_test": {
            "e2e": 0.25,
            "denoise_stage": 0.25,
            "non_denoise_stage": 0.8,
            "denoise_step": 0.3,
            "denoise_agg": 0.2,
            "load_peak_vram": 0.01,
            "runtime_peak_vram": 0.02
        }
    },
    "improvement_reporting": {
        "threshold": 0.2
    },
    "sampling": {
        "step_fractions": [
            0.0,
            0.5,
            1.0
        ]
    },
    "scenarios": {
        "untouched": {
            "stages_ms": {
                "DenoisingStage": 100.0
            },
            "denoise_step_ms": {
                "0": 10.0
            },
            "expected_e2e_ms": 120.0,
            "expected_avg_denoise_ms": 10.0,
            "expected_median_denoise_ms": 10.0,
            "estimated_full_test_time_s": 30.0
        },
        "img": {
            "stages_ms": {
                "TextEncodingStage": 5.0,
                "DenoisingStage": 40.0,
                "OldStage": 1.0,
                "per_frame_generation": null,
                "DecodingStage": 9.0
            },
            "denoise_step_ms": {
                "0": 12.0,
                "2": 10.0,
                "4": 10.0
            },
            "expected_e2e_ms": 60.0,
            "expected_avg_denoise_ms": 10.0,
            "expected_median_denoise_ms": 10.0,
            "estimated_full_test_time_s": 5.0,
            "runtime_peak_allocated_mb": 3200.0,
            "timing_tolerance": 0.5
        }
    },
    "load_peak_vram_mb": {
        "img": 3000.0,
        "untouched": 100.0
    },
    "runtime_peak_vram_mb": {
        "img": 3400.0,
        "untouched": 200.0
    }
}
`

// twoPartitions: case img ran in two partitions with two requests each; each metric is worst
// in a different request, so only worst-of-N per metric gives the expected file.
func twoPartitions() []*results.Result {
	req := func(i int, total float64, te, den, dec float64, steps []float64, reserved, alloc float64) results.RequestResult {
		return results.RequestResult{Case: "img", Index: i, Of: 2, ServerTotalMs: total,
			Stages: results.Stages{
				{Name: "TextEncodingStage", Ms: te},
				{Name: "DenoisingStage", Ms: den},
				{Name: "NewStage", Ms: 0.001},
				{Name: "DecodingStage", Ms: dec},
			},
			StepsMs:     steps,
			PeakVRAMMiB: map[string]float64{"server_reserved": reserved, "server_allocated": alloc, "nvml_process": 9999}}
	}
	p0 := &results.Result{GPU: "5090", Cases: []results.CaseResult{{
		ID: "img", WallMs: 4321, Load: &results.Load{DurationMs: 800, PeakVRAMMiB: map[string]float64{"server_reserved": 3010}},
		Requests: []results.RequestResult{
			req(1, 70.123, 6, 41, 9.5, []float64{19, 10, 10, 10, 10}, 3394, 3100),   // worst e2e, step 0
			req(2, 65, 7.777, 40, 9, []float64{12, 11, 10, 10, 10.5}, 3396.5, 3105), // worst text encoding, step 1
		},
	}, {
		ID: "fresh", WallMs: 900, Load: &results.Load{DurationMs: 300},
		Requests: []results.RequestResult{
			{Case: "fresh", Index: 1, Of: 1, ServerTotalMs: 10, Stages: results.Stages{{Name: "DenoisingStage", Ms: 8}}, StepsMs: []float64{4, 4}},
		},
	}}}
	p1 := &results.Result{GPU: "5090", Cases: []results.CaseResult{{
		ID: "img", WallMs: 5678.9, Load: &results.Load{Reused: true},
		Requests: []results.RequestResult{
			req(1, 61, 6, 44.444, 9, []float64{12, 10, 13, 10, 10}, 3390, 3150), // worst denoising, step 2, allocated
			req(2, 62, 6, 40, 12.5, []float64{12, 10, 10, 10, 10}, 3402, 3100),  // worst decoding, reserved
		},
	}, {
		ID: "nothing", Requests: []results.RequestResult{{Case: "nothing", Index: 1, Of: 1}},
	}}}
	return []*results.Result{p0, p1}
}

func TestRegenerateGolden(t *testing.T) {
	base, err := Parse("5090.json", []byte(existing))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := Regenerate(base, twoPartitions(), RegenerateOptions{AllFields: true})
	if err != nil {
		t.Fatal(err)
	}
	out := reg.File.Marshal()
	golden.Check(t, "regenerated.json", out)
	var table bytes.Buffer
	if err := WriteChanges(&table, reg.Changes); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "regenerated-table.txt", table.Bytes())
	if want := []string{"case nothing: no request has a perf record, and no memory was measured; scenario left as it was"}; !cmp.Equal(reg.Warnings, want) {
		t.Errorf("warnings %q", reg.Warnings)
	}

	// Worst of N, metric by metric, read back through the loader.
	tol, _ := reg.File.Tolerances("", Overrides{})
	pb, _ := reg.File.Perf("img", tol, false)
	mem := reg.File.Memory("img", tol)
	for name, c := range map[string][2]float64{
		"e2e (p0 r1)":              {pb.E2EMs, 70.12},
		"TextEncoding (p0 r2)":     {stage(pb.Stages, "TextEncodingStage"), 7.78},
		"Denoising (p1 r1)":        {stage(pb.Stages, "DenoisingStage"), 44.44},
		"Decoding (p1 r2)":         {stage(pb.Stages, "DecodingStage"), 12.5},
		"NewStage never 0":         {stage(pb.Stages, "NewStage"), 0.01},
		"step 0 (p0 r1)":           {pb.StepsMs[0], 19},
		"step 2 (p1 r1)":           {pb.StepsMs[2], 13},
		"step 4 (p0 r2)":           {pb.StepsMs[4], 10.5},
		"avg (p0 r1: 59/5)":        {pb.AvgDenoiseMs, 11.8},
		"median (p0 r2)":           {pb.MedianDenoiseMs, 10.5},
		"runtime reserved (p1 r2)": {mem.RuntimePeakMiB, 3402},
		"allocated (p1 r1)":        {mem.RuntimeAllocatedMiB, 3150},
		"load reserved":            {mem.LoadPeakMiB, 3010},
	} {
		if math.Abs(c[0]-c[1]) > 1e-9 {
			t.Errorf("%s: %v, want %v", name, c[0], c[1])
		}
	}
	if _, ok := pb.StepsMs[1]; ok {
		t.Error("the file lists only sampled steps for img; step 1 must not be added")
	}
	if stageIndex(pb.Stages, "OldStage") >= 0 {
		t.Error("a stage the server no longer reports must be removed")
	}
	if !math.IsNaN(stage(pb.Stages, "per_frame_generation")) {
		t.Error("a null stage must stay null")
	}
	if s := reg.File.Scenarios["img"]; *s.EstimatedFullTestTimeS != 5.7 || s.TimingTolerance == nil || *s.TimingTolerance != 0.5 {
		t.Errorf("img: est %v, timing tolerance %v", *s.EstimatedFullTestTimeS, s.TimingTolerance)
	}
	if s := reg.File.Scenarios["fresh"]; s == nil || *s.ExpectedLoadMs != 300 || len(s.StepsMs) != 2 {
		t.Errorf("new scenario: %+v", s)
	}
	if !strings.Contains(string(out), `"untouched": {
            "stages_ms": {
                "DenoisingStage": 100.0`) {
		t.Error("untouched scenario changed")
	}
	// The base file is left as it was read.
	if !bytes.Equal(base.Marshal(), []byte(existing)) {
		t.Error("Regenerate changed its base")
	}
}

func stageIndex(s results.Stages, name string) int {
	for i, st := range s {
		if st.Name == name {
			return i
		}
	}
	return -1
}

func stage(s results.Stages, name string) float64 {
	if i := stageIndex(s, name); i >= 0 {
		return s[i].Ms
	}
	return -1
}

// Regenerating twice, in any order of the results, gives the same bytes; regenerating from
// the output again changes nothing.
func TestRegenerateStable(t *testing.T) {
	base, err := Parse("5090.json", []byte(existing))
	if err != nil {
		t.Fatal(err)
	}
	rs := twoPartitions()
	a, err := Regenerate(base, rs, RegenerateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Regenerate(base, []*results.Result{rs[1], rs[0]}, RegenerateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.File.Marshal(), b.File.Marshal()) {
		t.Error("result order changed the file")
	}
	c, err := Regenerate(a.File, rs, RegenerateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.File.Marshal(), c.File.Marshal()) {
		t.Errorf("second regeneration differs:\n%s", cmp.Diff(string(a.File.Marshal()), string(c.File.Marshal())))
	}
	for _, ch := range c.Changes {
		if ch.Old != ch.New && !(math.IsNaN(ch.Old) && math.IsNaN(ch.New)) {
			t.Errorf("second regeneration changed %s %s: %v → %v", ch.Scenario, ch.Metric, ch.Old, ch.New)
		}
	}
}

// A real SGLang file regenerated from results for one of its scenarios keeps every other
// byte: the diff a reviewer sees is the measured scenario only.
func TestRegenerateRealFileMinimalDiff(t *testing.T) {
	path := filepath.Join(perfBaselinesDir, "h100.json")
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios["qwen_image_t2i"]
	steps := make([]float64, 50)
	for i := range steps {
		steps[i] = s.StepsMs[i]
	}
	rr := results.RequestResult{Index: 1, Of: 1, ServerTotalMs: *s.E2EMs, Stages: s.Stages, StepsMs: steps}
	res := &results.Result{Cases: []results.CaseResult{{ID: "qwen_image_t2i", Requests: []results.RequestResult{rr}}}}
	reg, err := Regenerate(f, []*results.Result{res}, RegenerateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(path)
	got := reg.File.Marshal()
	// Only avg and median move (recomputed from the same steps); everything else is equal.
	ol, gl := strings.Split(string(orig), "\n"), strings.Split(string(got), "\n")
	if len(ol) != len(gl) {
		t.Fatalf("line count %d → %d", len(ol), len(gl))
	}
	var changed []string
	for i := range ol {
		if ol[i] != gl[i] {
			changed = append(changed, strings.TrimSpace(ol[i])+" → "+strings.TrimSpace(gl[i]))
		}
	}
	want := []string{
		`"expected_avg_denoise_ms": 247.95, → "expected_avg_denoise_ms": 247.24,`,
		`"expected_median_denoise_ms": 249.01, → "expected_median_denoise_ms": 248.01,`,
	}
	if !cmp.Equal(changed, want) {
		t.Errorf("changed lines:\n%s", strings.Join(changed, "\n"))
	}
}

func TestSnippet(t *testing.T) {
	rr := results.RequestResult{ServerTotalMs: 812.3456, Stages: results.Stages{{Name: "DenoisingStage", Ms: 800}}, StepsMs: []float64{300, 250, 250},
		PeakVRAMMiB: map[string]float64{"server_reserved": 3394}}
	got := Snippet("new_case", rr)
	want := `"new_case": {
    "stages_ms": {
        "DenoisingStage": 800.0
    },
    "denoise_step_ms": {
        "0": 300.0,
        "1": 250.0,
        "2": 250.0
    },
    "expected_e2e_ms": 812.35,
    "expected_avg_denoise_ms": 266.67,
    "expected_median_denoise_ms": 250.0,
    "runtime_peak_vram_mb": 3394.0
}`
	if got != want {
		t.Errorf("(-want +got):\n%s", cmp.Diff(want, got))
	}
}

// TestRegenerateMemoryOnly: a server without performance.log (not SGLang's) had its memory and
// load measured: a new scenario gets them, with SGLang's empty timings so that the file still
// reads; an existing scenario keeps its timings; the warning names what was written and what
// was left out.
func TestRegenerateMemoryOnly(t *testing.T) {
	runs := []*results.Result{{GPU: "h100", Cases: []results.CaseResult{{
		ID: "torch", WallMs: 9000, Load: &results.Load{DurationMs: 2800, PeakVRAMMiB: map[string]float64{"nvml_process": 2100}},
		Requests: []results.RequestResult{
			{Case: "torch", Index: 1, Of: 2, PeakVRAMMiB: map[string]float64{"nvml_process": 4000, "host_anon": 900}},
			{Case: "torch", Index: 2, Of: 2, PeakVRAMMiB: map[string]float64{"nvml_process": 4100, "host_anon": 950}},
		},
	}}}}
	reg, err := Regenerate(nil, runs, RegenerateOptions{AllFields: true})
	if err != nil {
		t.Fatal(err)
	}
	tol, _ := reg.File.Tolerances("", Overrides{})
	mem := reg.File.Memory("torch", tol)
	if mem.LoadPeakMiB != 2100 || mem.RuntimePeakMiB != 4100 {
		t.Errorf("memory %+v, want load 2100, runtime 4100 MiB", mem)
	}
	if len(reg.Warnings) != 1 || !strings.Contains(reg.Warnings[0], "case torch: no request has a perf record: wrote expected_load_ms, load_peak_vram_mb, "+
		"runtime_peak_host_anon_mb, runtime_peak_vram_mb; left out the timings") {
		t.Errorf("warnings %q", reg.Warnings)
	}
	out := string(reg.File.Marshal())
	for _, want := range []string{`"expected_e2e_ms": 0`, `"stages_ms": {}`, `"denoise_step_ms": {}`, `"expected_load_ms": 2800`} {
		if !strings.Contains(out, want) {
			t.Errorf("the file lacks %s:\n%s", want, out)
		}
	}
}
