package baselines

import (
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
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
  "over": {"expected_e2e_ms": 1.0, "tolerance_overrides": {"e2e": 0.91, "denoise_stage": 0.92, "non_denoise_stage": 0.93, "denoise_step": 0.94, ` +
		`"denoise_agg": 0.95}}}}`
	f, err := Parse("h100.json", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	env := Overrides{"e2e": 0.61, "denoise_stage": 0.62, "non_denoise_stage": 0.63, "denoise_step": 0.64, "denoise_agg": 0.65}
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

// Every limit of SGLang's real baseline files, under both profiles: a request exactly at the
// limit of one metric passes that check, one ulp over fails it. A zero baseline (h100.json has
// one) fails either way, as SGLang PR #39206 makes it.
func TestRealScenariosAtTheLimit(t *testing.T) {
	files, err := filepath.Glob("testdata/sglang/perf_baselines/*.json")
	if err != nil || len(files) != 2 {
		t.Fatalf("want SGLang's h100.json and 5090.json in testdata/sglang/perf_baselines, got %v (%v)", files, err)
	}
	up := func(v float64) float64 { return math.Nextafter(v, math.Inf(1)) }
	n := 0
	for _, path := range files {
		f, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, profile := range []string{"pr_test", "long_term"} {
			tol, err := f.Tolerances(profile, Overrides{})
			if err != nil {
				t.Fatal(err)
			}
			for id := range f.Scenarios {
				pb, ok := f.Perf(id, tol, false)
				if !ok {
					continue
				}
				// base is a request at every baseline value: what one check is varied against.
				maxStep := -1
				for i := range pb.StepsMs {
					maxStep = max(maxStep, i)
				}
				steps := make([]float64, maxStep+1)
				for i := range steps {
					steps[i] = pb.StepsMs[i]
					if steps[i] == 0 {
						steps[i] = 1
					}
				}
				var stages checks.Stages
				for _, st := range pb.Stages {
					if !math.IsNaN(st.Ms) {
						stages = append(stages, st)
					}
				}
				base := checks.RequestResult{ServerTotalMs: pb.E2EMs, Stages: stages, StepsMs: steps}
				try := func(what, check string, rr checks.RequestResult, want checks.Status) {
					t.Helper()
					n++
					for _, c := range checks.Perf(rr, pb) {
						if c.Name == check {
							if c.Status != want {
								t.Errorf("%s %s %s: %s = %s, want %s (%s)", filepath.Base(path), profile, id, what, c.Status, want, c.Detail)
							}
							return
						}
					}
					t.Errorf("%s %s %s: no check %s", filepath.Base(path), profile, id, check)
				}
				at := func(b, tl, pad float64) (float64, float64) {
					l := checks.PerfLimit(b, tl, pad)
					return l, up(l)
				}
				okIf := func(b float64) checks.Status {
					if b > 0 {
						return checks.Pass
					}
					return checks.Fail
				}
				l, over := at(pb.E2EMs, pb.Tol.E2E, checks.E2EPadMs)
				rr := base
				rr.ServerTotalMs = l
				try("e2e at the limit", checks.PerfE2E, rr, okIf(pb.E2EMs))
				rr.ServerTotalMs = over
				try("e2e one ulp over", checks.PerfE2E, rr, checks.Fail)
				for _, agg := range []struct {
					check string
					b     float64
				}{{checks.PerfDenoiseAvg, pb.AvgDenoiseMs}, {checks.PerfDenoiseMedian, pb.MedianDenoiseMs}} {
					l, over := at(agg.b, pb.Tol.DenoiseAgg, checks.AggPadMs)
					rr := base
					rr.StepsMs = []float64{l, l}
					try(agg.check+" at the limit", agg.check, rr, okIf(agg.b))
					rr.StepsMs = []float64{over, over}
					try(agg.check+" one ulp over", agg.check, rr, checks.Fail)
				}
				for _, i := range checks.SampleSteps(len(steps), pb.StepFractions) {
					tl, pad := pb.Tol.DenoiseStep, checks.StepPadMs
					if i == 0 {
						tl, pad = checks.Step0Tolerance, checks.Step0PadMs
					}
					l, over := at(pb.StepsMs[i], tl, pad)
					rr := base
					rr.StepsMs = slices.Clone(steps)
					rr.StepsMs[i] = l
					name := checks.PerfStepPrefix + strconv.Itoa(i)
					try(name+" at the limit", name, rr, okIf(pb.StepsMs[i]))
					rr.StepsMs[i] = over
					try(name+" one ulp over", name, rr, checks.Fail)
				}
				for k, st := range stages {
					if st.Name == checks.PerFrameGeneration {
						continue
					}
					tl, pad := pb.Tol.NonDenoiseStage, checks.StagePadMs
					switch {
					case strings.HasSuffix(st.Name, "DenoisingStage"): // the stage role of PR #39206
						tl = pb.Tol.DenoiseStage
					case strings.HasSuffix(st.Name, "DecodingStage"):
						tl, pad = max(tl, checks.DecodingTolerance), checks.DecodingPadMs
					}
					l, over := at(st.Ms, tl, pad)
					rr := base
					rr.Stages = slices.Clone(stages)
					rr.Stages[k].Ms = l
					name := checks.PerfStagePrefix + st.Name
					try(name+" at the limit", name, rr, okIf(st.Ms))
					rr.Stages[k].Ms = over
					try(name+" one ulp over", name, rr, checks.Fail)
				}
			}
		}
	}
	t.Logf("%d verdicts on SGLang's real baselines, at the limit and one ulp over", n)
}
