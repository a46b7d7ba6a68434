package baselines

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// sglangDir holds SGLang's real CI data files, copied unchanged (testdata/sglang/SOURCES.md).
const sglangDir = "testdata/sglang"

// perfBaselinesDir holds SGLang's perf baselines (h100.json, 5090.json).
var perfBaselinesDir = filepath.Join(sglangDir, "perf_baselines")

func realFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(perfBaselinesDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no SGLang perf baselines in %s: %v", perfBaselinesDir, err)
	}
	return files
}

// Every real SGLang file loads, and writing it back unchanged gives the same bytes.
func TestRealFilesLoadAndRoundTrip(t *testing.T) {
	for _, path := range realFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(path, data)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Marshal(); !bytes.Equal(got, data) {
				t.Errorf("Marshal differs from the file:\n%s", cmp.Diff(string(data), string(got)))
			}
			for _, p := range []string{"pr_test", "long_term"} {
				if _, err := f.Tolerances(p, Overrides{}); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// What the real files mean, spot-checked against values read off the files by hand.
func TestRealFilesMeaning(t *testing.T) {
	h100, err := Load(filepath.Join(perfBaselinesDir, "h100.json"))
	if err != nil {
		t.Fatal(err)
	}
	inScenarios := 0
	for _, s := range h100.Scenarios {
		if s.InScenarios {
			inScenarios++
		}
	}
	if inScenarios != 63 {
		t.Errorf("h100.json: %d scenarios, want 63", inScenarios)
	}
	tol, err := h100.Tolerances("pr_test", Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	want := Tolerances{E2E: 0.25, DenoiseStage: 0.25, NonDenoiseStage: 0.8, DenoiseStep: 0.3, DenoiseAgg: 0.2, LoadPeakVRAM: 0.01, RuntimePeakVRAM: 0.02}
	if diff := cmp.Diff(want, tol); diff != "" {
		t.Errorf("h100 pr_test (-want +got):\n%s", diff)
	}
	pb, ok := h100.Perf("qwen_image_t2i", tol, false)
	if !ok {
		t.Fatal("qwen_image_t2i missing")
	}
	if pb.E2EMs != 12799.17 || pb.AvgDenoiseMs != 247.95 || pb.MedianDenoiseMs != 249.01 || pb.StepsMs[0] != 196.21 || pb.StepsMs[49] != 248.9 ||
		len(pb.StepsMs) != 50 {
		t.Errorf("qwen_image_t2i: %+v", pb)
	}
	if got := stageNames(pb.Stages); got != "TextEncodingStage DenoisingStage InputValidationStage LatentPreparationStage TimestepPreparationStage DecodingStage" {
		t.Errorf("stage order %q: the file's order must be kept", got)
	}
	if m := h100.Memory("qwen_image_t2i", tol); !math.IsNaN(m.RuntimePeakMiB) || !math.IsNaN(m.LoadPeakMiB) {
		t.Errorf("h100 has no memory baselines, got %+v", m)
	}

	r5090, err := Load(filepath.Join(perfBaselinesDir, "5090.json"))
	if err != nil {
		t.Fatal(err)
	}
	lt, err := r5090.Tolerances("long_term", Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if lt.E2E != 0.15 || lt.LoadPeakVRAM != 0.01 || lt.RuntimePeakVRAM != 0.02 {
		t.Errorf("5090 long_term: %+v", lt)
	}
	m := r5090.Memory("zimage_image_t2i", lt)
	if m.LoadPeakMiB != 13120 || m.RuntimePeakMiB != 17776 || m.LoadTol != 0.01 || m.RuntimeTol != 0.02 {
		t.Errorf("5090 zimage memory from the top-level maps: %+v", m)
	}
	// In the memory maps but not under "scenarios": memory applies, perf has no scenario.
	if m := r5090.Memory("turbo_wan2_1_t2v_1.3b", lt); m.RuntimePeakMiB != 18222 {
		t.Errorf("memory-only scenario: %+v", m)
	}
	if _, ok := r5090.Perf("turbo_wan2_1_t2v_1.3b", lt, true); ok {
		t.Error("a scenario only in the memory maps has no perf baseline")
	}
	pb5, _ := r5090.Perf("flux_2_klein_base_image_t2i", lt, false)
	if got := checks.SampleSteps(50, pb5.StepFractions); !equalInts(got, []int{0, 10, 20, 29, 39, 49}) {
		t.Errorf("sampled steps %v", got)
	}
	for _, i := range []int{0, 10, 20, 29, 39, 49} {
		if _, ok := pb5.StepsMs[i]; !ok {
			t.Errorf("5090 flux_2_klein: sampled step %d has no baseline", i)
		}
	}
}

func stageNames(s results.Stages) string {
	var n []string
	for _, st := range s {
		n = append(n, st.Name)
	}
	return strings.Join(n, " ")
}

func equalInts(a, b []int) bool { return cmp.Equal(a, b) }

func TestTolerancesFlatProfileOverrides(t *testing.T) {
	const flat = `{"tolerances": {"e2e": 0.1, "denoise_stage": 0.2, "non_denoise_stage": 0.3, "denoise_step": 0.4, "denoise_agg": 0.5},
 "sampling": {"step_fractions": [0.0, 1.0]},
 "scenarios": {"a": {"stages_ms": {}, "denoise_step_ms": {}, "expected_e2e_ms": 100.0,
   "expected_avg_denoise_ms": 1.0, "expected_median_denoise_ms": 1.0, "timing_tolerance": 0.9}}}`
	f, err := Parse("flat.json", []byte(flat))
	if err != nil {
		t.Fatal(err)
	}
	// A flat legacy file answers every profile name.
	tol, err := f.Tolerances("long_term", Overrides{"denoise_step": 0.7})
	if err != nil {
		t.Fatal(err)
	}
	want := Tolerances{E2E: 0.1, DenoiseStage: 0.2, NonDenoiseStage: 0.3, DenoiseStep: 0.7, DenoiseAgg: 0.5, LoadPeakVRAM: 0.01, RuntimePeakVRAM: 0.02}
	if diff := cmp.Diff(want, tol); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	pb, _ := f.Perf("a", tol, false)
	if pb.Tol.E2E != 0.9 || pb.Tol.DenoiseStep != 0.9 || pb.Tol.Load != 0.1 {
		t.Errorf("timing_tolerance over profile and env, the load's the profile's E2E: %+v", pb.Tol)
	}
	if m := f.Memory("a", tol); m.RuntimeTol != 0.02 {
		t.Errorf("memory keeps the profile's: %+v", m)
	}
	if f.ImprovementThreshold != 0.2 {
		t.Errorf("default improvement threshold %v", f.ImprovementThreshold)
	}
}

func TestParseOverrides(t *testing.T) {
	env := map[string]string{"SGLANG_E2E_TOLERANCE": "0.5", "SGLANG_DENOISE_AGG_TOLERANCE": " 0.3 "}
	o, err := ParseOverrides(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Overrides{"e2e": 0.5, "denoise_agg": 0.3}, o); diff != "" {
		t.Errorf("overrides (-want +got):\n%s", diff)
	}
	env["SGLANG_STAGE_TIME_TOLERANCE"] = "lots"
	if _, err := ParseOverrides(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "SGLANG_STAGE_TIME_TOLERANCE") {
		t.Errorf("bad value: %v", err)
	}
}

// Malformed files: every problem at once, each naming file:line and key path.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, json string
		want       []string
	}{
		{"syntax", "{\n\"tolerances\": {,}\n}", []string{"bad.json:2: invalid JSON: invalid character"}},
		{"no tolerance_overrides", `{"tolerances": {"pr_test": {"e2e": 0.1, "denoise_stage": 0.1, "non_denoise_stage": 0.1, "denoise_step": 0.1, "denoise_agg": 0.1}},
"sampling": {"step_fractions": [0.0]},
"scenarios": {"x": {
  "tolerance_overrides": {"e2e": 0.3},
  "expected_e2e_ms": "fast", "timing_tolerance": -0.5}}}`, []string{
			"bad.json:4: scenarios.x.tolerance_overrides: not a key of SGLang's baseline files: a scenario widens its wall-clock tolerances with timing_tolerance",
			"bad.json:5: scenarios.x.expected_e2e_ms: want a number, got a string",
			"bad.json:5: scenarios.x.timing_tolerance: want a number ≥ 0"}},
		{"profile key missing", `{"tolerances": {"pr_test": {"e2e": 0.1}}, "sampling": {"step_fractions": [2.0]}, "scenarios": {}}`, []string{
			"tolerances.pr_test.denoise_stage: missing", "tolerances.pr_test.denoise_agg: missing",
			"sampling.step_fractions[0]: want a fraction in [0, 1], got 2.0"}},
		{"top-level map", `{"tolerances": {"e2e": 0.1, "denoise_stage": 0.1, "non_denoise_stage": 0.1, "denoise_step": 0.1, "denoise_agg": 0.1},
"sampling": {"step_fractions": []}, "scenarios": {"a": {"denoise_step_ms": {"x": 1.0}}},
"runtime_peak_vram_mb": {"a": -3}}`, []string{
			"bad.json:2: scenarios.a.denoise_step_ms.x: want a step index", "bad.json:3: runtime_peak_vram_mb.a: want a number ≥ 0, got -3"}},
		{"duplicate key", "{\"scenarios\": {},\n\"scenarios\": {}}", []string{"bad.json:2: duplicate key \"scenarios\", first at line 1"}},
		{"missing sections", `{"scenarios": {}}`, []string{"tolerances: missing", "sampling: missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.json", []byte(tt.json))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

func TestMissingProfile(t *testing.T) {
	f, err := Load(filepath.Join(perfBaselinesDir, "h100.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Tolerances("long-term", Overrides{}); err == nil ||
		!strings.Contains(err.Error(), `no profile "long-term" (the file has long_term, pr_test)`) {
		t.Errorf("got %v", err)
	}
}

func TestGPUClass(t *testing.T) {
	for name, want := range map[string]string{
		"NVIDIA H100 80GB HBM3":   "h100",
		"NVIDIA H100 PCIe":        "h100",
		"NVIDIA H200":             "h200",
		"NVIDIA GH200 480GB":      "gh200",
		"NVIDIA B200":             "b200",
		"NVIDIA GeForce RTX 5090": "5090",
		"NVIDIA A100-SXM4-80GB":   "a100",
		"NVIDIA L4":               "l4",
		"NVIDIA L40S":             "l40s",
		"NVIDIA H20":              "h20",
		"AMD Instinct MI300X":     "mi300x",
		"NVIDIA RTX PRO 6000 Blackwell Server Edition": "rtx_pro_6000",
	} {
		if got, ok := GPUClass(name); !ok || got != want {
			t.Errorf("GPUClass(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	if got, ok := GPUClass("Tesla T4"); ok {
		t.Errorf("an unlisted GPU must not be guessed, got %q", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, p := range []string{"5090.json"} { // h100.json is large: it slows the fuzzer down
		if b, err := os.ReadFile(filepath.Join(perfBaselinesDir, p)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"tolerances": {"e2e": 0.1}, "scenarios": {"a": {"timing_tolerance": "x"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.json", data)
		if err != nil {
			return
		}
		// What loads writes back to something that loads the same.
		again, err := Parse("fuzz.json", file.Marshal())
		if err != nil {
			t.Fatalf("marshalled file does not parse: %v", err)
		}
		if len(again.Scenarios) != len(file.Scenarios) {
			t.Fatalf("scenarios %d → %d", len(file.Scenarios), len(again.Scenarios))
		}
	})
}

// TestToleranceTableCoversEveryField: the tolerances table has one row per field of
// Tolerances, each row its own field, so that a tolerance added to the struct and not to the
// table (or twice to the table) fails here instead of being silently never read.
func TestToleranceTableCoversEveryField(t *testing.T) {
	var tol Tolerances
	seen := map[*float64]string{}
	for _, row := range tolerances {
		p := row.field(&tol)
		if other, ok := seen[p]; ok {
			t.Errorf("tolerances %q and %q set the same field", other, row.key)
		}
		seen[p] = row.key
	}
	// Load and HasLoad are the profile's "load", which no variable overrides: read apart.
	if n := reflect.TypeFor[Tolerances]().NumField() - 2; len(seen) != n {
		t.Errorf("the tolerances table sets %d fields of Tolerances, which has %d besides Load and HasLoad", len(seen), n)
	}
}
