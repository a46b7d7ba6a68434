package baselines

import (
	"strings"
	"testing"
)

// Rule: the tolerance in force is the scenario's tolerance_overrides, else the env override,
// else the profile; an unknown override key is an error naming the file and the scenario.
// Source: SGLang testcase_configs.py @ a53d3636ce05 (ToleranceConfig.load_profile) and PR
// #38457 (tolerance_overrides).
func TestToleranceOverridesRule(t *testing.T) {
	const source = "ToleranceConfig.load_profile, testcase_configs.py @ a53d3636ce05; PR #38457"
	const file = `{"tolerances": {"pr_test": {"e2e": 0.1, "denoise_stage": 0.2, "non_denoise_stage": 0.3, "denoise_step": 0.4, "denoise_agg": 0.5}},
 "sampling": {"step_fractions": [0.0, 1.0]},
 "scenarios": {
  "plain": {"expected_e2e_ms": 1.0},
  "over": {"expected_e2e_ms": 1.0, "tolerance_overrides": {"e2e": 0.91, "denoise_stage": 0.92, "non_denoise_stage": 0.93, "denoise_step": 0.94, "denoise_agg": 0.95}}}}`
	f, err := Parse("h100.json", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	env := Overrides{E2E: ptr(0.61), DenoiseStage: ptr(0.62), NonDenoiseStage: ptr(0.63), DenoiseStep: ptr(0.64), DenoiseAgg: ptr(0.65)}
	type tols = [5]float64
	get := func(scenario string, ov Overrides) tols {
		tol, err := f.Tolerances("pr_test", ov)
		if err != nil {
			t.Fatal(err)
		}
		pb, ok := f.Perf(scenario, tol, false)
		if !ok {
			t.Fatalf("no scenario %s", scenario)
		}
		return tols{pb.Tol.E2E, pb.Tol.DenoiseStage, pb.Tol.NonDenoiseStage, pb.Tol.DenoiseStep, pb.Tol.DenoiseAgg}
	}
	for _, tt := range []struct {
		input string
		got   tols
		want  tols
	}{
		{"profile only", get("plain", Overrides{}), tols{0.1, 0.2, 0.3, 0.4, 0.5}},
		{"env over profile", get("plain", env), tols{0.61, 0.62, 0.63, 0.64, 0.65}},
		{"scenario over profile", get("over", Overrides{}), tols{0.91, 0.92, 0.93, 0.94, 0.95}},
		{"scenario over env", get("over", env), tols{0.91, 0.92, 0.93, 0.94, 0.95}},
	} {
		if tt.got != tt.want {
			t.Errorf("%s (%s): %v, want %v", tt.input, source, tt.got, tt.want)
		}
	}
	bad := strings.Replace(file, `"denoise_agg": 0.95}`, `"denoise_agg": 0.95, "e2e_ms": 0.3}`, 1)
	_, err = Parse("h100.json", []byte(bad))
	if err == nil || !strings.Contains(err.Error(), `h100.json:5: scenarios.over.tolerance_overrides.e2e_ms: unknown tolerance "e2e_ms"`) {
		t.Errorf("unknown override key (%s): %v", source, err)
	}
}

// Rule: on an AMD GPU SGLang's harness uses tolerance 1.0 and only warns.
// Source: test_server_utils.py @ dd8c5849af99, PerformanceValidator (current_platform.is_hip()).
func TestROCmClasses(t *testing.T) {
	for class, want := range map[string]bool{
		"mi300x": true, "MI355X": true, "gfx1250": true, "gfx942": true,
		"h100": false, "5090": false, "b200": false, "intel_xpu_b60": false, "mist": false, "gfx": false, "": false,
	} {
		if got := ROCm(class); got != want {
			t.Errorf("ROCm(%q) = %v, want %v", class, got, want)
		}
	}
}
