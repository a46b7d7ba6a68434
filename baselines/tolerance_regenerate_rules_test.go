package baselines

import (
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// Rule: SGLANG_LOAD_PEAK_VRAM_TOLERANCE and SGLANG_RUNTIME_PEAK_VRAM_TOLERANCE replace the
// profile's load_peak_vram and runtime_peak_vram, or their defaults 0.01 and 0.02 when the
// profile has none; a scenario's timing_tolerance leaves them. Source: SGLang
// testcase_configs.py @ a7ec6b97f786 (ToleranceConfig.load_profile); ScenarioConfig.timing_tolerance
// (web4hub/Sgl @ 4e66c7cc: "Memory guards keep the profile tolerance").
func TestVRAMToleranceEnvRule(t *testing.T) {
	const src = "ToleranceConfig.load_profile, testcase_configs.py @ a7ec6b97f786"
	const file = `{"tolerances": {"pr_test": {"e2e": 0.1, "denoise_stage": 0.2, "non_denoise_stage": 0.3, "denoise_step": 0.4, "denoise_agg": 0.5, ` +
		`"load_peak_vram": 0.03}},
 "sampling": {"step_fractions": [0.0, 1.0]},
 "scenarios": {"plain": {"expected_e2e_ms": 1.0}, "over": {"expected_e2e_ms": 1.0, "timing_tolerance": 0.9}}}`
	f, err := Parse("h100.json", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	parse := func(env map[string]string) Overrides {
		o, err := ParseOverrides(func(k string) string { return env[k] })
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		return o
	}
	tols := func(scenario string, ov Overrides) [2]float64 {
		tol, err := f.Tolerances("pr_test", ov)
		if err != nil {
			t.Fatal(err)
		}
		mb := f.Memory(scenario, tol)
		return [2]float64{mb.LoadTol, mb.RuntimeTol}
	}
	env := parse(map[string]string{"SGLANG_LOAD_PEAK_VRAM_TOLERANCE": "0.05", "SGLANG_RUNTIME_PEAK_VRAM_TOLERANCE": "0.07"})
	for _, tt := range []struct {
		input     string
		got, want [2]float64
	}{
		{"profile, and the runtime default", tols("plain", Overrides{}), [2]float64{0.03, 0.02}},
		{"env over profile and default", tols("plain", env), [2]float64{0.05, 0.07}},
		{"only the load variable", tols("plain", parse(map[string]string{"SGLANG_LOAD_PEAK_VRAM_TOLERANCE": "0"})), [2]float64{0, 0.02}},
		{"timing_tolerance leaves memory", tols("over", env), [2]float64{0.05, 0.07}},
	} {
		if tt.got != tt.want {
			t.Errorf("%s (%s): %v, want %v", tt.input, src, tt.got, tt.want)
		}
	}
	if _, err := ParseOverrides(func(k string) string {
		return map[string]string{"SGLANG_RUNTIME_PEAK_VRAM_TOLERANCE": "-1"}[k]
	}); err == nil || !strings.Contains(err.Error(), "SGLANG_RUNTIME_PEAK_VRAM_TOLERANCE") {
		t.Errorf("a negative tolerance: %v", err)
	}
}

// Rule: a regenerated new scenario holds the keys of SGLang's baseline dump (stages_ms,
// denoise_step_ms, expected_*, estimated_full_test_time_s, load/runtime_peak_vram_mb), plus
// the other keys diffusion-check measures only where the file already uses them or every
// field is asked for. Source: _dump_baseline_for_testcase, test_server_common.py @
// a7ec6b97f786; since SGLang PR #39206 (2026-09-12) its baseline script also writes
// expected_load_ms for every case it measured (test_baseline_script_preserves_required_load_measurement).
func TestRegenerateFieldsRule(t *testing.T) {
	const src = "_dump_baseline_for_testcase, test_server_common.py @ a7ec6b97f786; PR #39206"
	rr := results.RequestResult{Index: 1, Of: 1, ServerTotalMs: 900, Stages: results.Stages{{Name: "DenoisingStage", Ms: 800}}, StepsMs: []float64{300, 250},
		PeakVRAMMiB: map[string]float64{checks.SourceServerReserved: 3000, checks.SourceServerAllocated: 2800, checks.SourceServerHostAnon: 900}}
	res := &results.Result{Cases: []results.CaseResult{{ID: "new", WallMs: 12000,
		Load:     &results.Load{DurationMs: 5000, PeakVRAMMiB: map[string]float64{checks.SourceServerReserved: 2000, checks.SourceServerAllocated: 1900}},
		Requests: []results.RequestResult{rr}}}}
	sglang := []string{
		"denoise_step_ms",
		"estimated_full_test_time_s",
		"expected_avg_denoise_ms",
		"expected_e2e_ms",
		"expected_load_ms",
		"expected_median_denoise_ms",
		"load_peak_vram_mb",
		"runtime_peak_vram_mb",
		"stages_ms",
	}
	withFile := func(scenarios string) *File {
		f, err := Parse(
			"h100.json",
			[]byte(`{"tolerances": {"pr_test": {"e2e": 0.1, "denoise_stage": 0.2, "non_denoise_stage": 0.3, "denoise_step": 0.4, "denoise_agg": 0.5}},
 "sampling": {"step_fractions": [0.0, 1.0]}, "scenarios": {`+scenarios+`}}`),
		)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tt := range []struct {
		input string
		base  *File
		opts  RegenerateOptions
		want  []string
	}{
		{"no file: SGLang's keys only", nil, RegenerateOptions{}, sglang},
		{"a file without the extra keys", withFile(`"old": {"expected_e2e_ms": 1.0}`), RegenerateOptions{}, sglang},
		{"a file that uses expected_load_ms", withFile(`"old": {"expected_e2e_ms": 1.0, "expected_load_ms": 4000.0}`), RegenerateOptions{}, sglang},
		{"--all-fields", nil, RegenerateOptions{AllFields: true},
			append(slices.Clone(sglang), "load_peak_allocated_mb", "runtime_peak_allocated_mb", "runtime_peak_host_anon_mb")},
	} {
		reg, err := Regenerate(tt.base, []*results.Result{res}, tt.opts)
		if err != nil {
			t.Fatalf("%s: %v", tt.input, err)
		}
		doc, err := parseJSON(reg.File.Path, reg.File.Marshal())
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Sorted(slices.Values(doc.get("scenarios").get("new").keys))
		slices.Sort(tt.want)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (%s): keys (-want +got):\n%s", tt.input, src, diff)
		}
	}
}

// Rule: on SGLang's own h100.json, 12 of the 63 scenarios have a model-specific
// denoising-role stage (LTX2AVDenoisingStage, DmdDenoisingStage, ...), which PR #39206 checks
// with the denoise_stage tolerance instead of non_denoise_stage. Source: PR #39206 (stage
// role); testdata/sglang/perf_baselines/h100.json (SOURCES.md).
func TestStageRoleOnSGLangBaselines(t *testing.T) {
	const src = "PR #39206, stage role"
	f, err := Load(perfBaselinesDir + "/h100.json")
	if err != nil {
		t.Fatal(err)
	}
	tol, err := f.Tolerances("pr_test", Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	n, checked := 0, 0
	for _, id := range slices.Sorted(maps.Keys(f.Scenarios)) {
		pb, ok := f.Perf(id, tol, false)
		if !ok {
			continue
		}
		role := false
		for _, st := range pb.Stages {
			if st.Name == checks.DenoisingStage || !checks.DenoisingRole(st.Name) || math.IsNaN(st.Ms) || st.Ms <= 0 {
				continue
			}
			role = true
			limit := checks.PerfLimit(st.Ms, pb.Tol.DenoiseStage, checks.StagePadMs)
			for _, v := range []float64{limit, math.Nextafter(limit, math.Inf(1))} {
				want := results.Pass
				if v > limit {
					want = results.Fail
				}
				var got results.Status
				for _, c := range checks.StageChecks(results.Stages{{Name: st.Name, Ms: v}}, pb) {
					if c.Name == checks.PerfStagePrefix+st.Name {
						got = c.Status
					}
				}
				if got != want {
					t.Errorf("%s %s at %v (%s): %s, want %s", id, st.Name, v, src, got, want)
				}
				checked++
			}
		}
		if role {
			n++
		}
	}
	if n != 12 || len(f.Scenarios) != 63 {
		t.Errorf("%d of %d scenarios with a denoising-role stage, want 12 of 63 (%s)", n, len(f.Scenarios), src)
	}
	t.Logf("%d verdicts at the denoise_stage limit of role stages", checked)
}

// Every env override of the tolerances table is documented where the tolerances are (one
// list, one home: the docs are tested against the table).
func TestOverrideEnvDocumented(t *testing.T) {
	for _, doc := range []string{"../docs/baselines.md", "../docs/sglang-compat.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range tolerances {
			if !strings.Contains(string(b), "`"+e.env+"`") {
				t.Errorf("%s does not name %s", doc, e.env)
			}
		}
	}
}
