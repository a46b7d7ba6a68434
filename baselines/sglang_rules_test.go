package baselines

import (
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// Rule: a scenario's timing_tolerance replaces the wall-clock tolerances (e2e, denoise stage,
// non-denoise stages, denoise step, denoise aggregates) of the profile and of the env, at its
// value whatever they are; memory keeps the profile's, and perf.load takes the profile's
// "load", else its E2E (env included), never timing_tolerance. A scenario cannot set a
// tolerance one by one: tolerance_overrides is refused, naming file and scenario. Sources:
// testcase_configs.py ScenarioConfig.timing_tolerance ("per-case override for the wall-clock
// tolerances (e2e, denoise and stage timings) … Memory guards keep the profile tolerance"),
// ToleranceConfig.load (web4hub/Sgl @ 4e66c7cc, on or after 2026-09-23); PR #38457
// (2026-09-08); test/runner/PERFORMANCE.md @ 2d98cbd9 for the load (reading).
func TestTimingToleranceRule(t *testing.T) {
	const source = "ScenarioConfig.timing_tolerance, ToleranceConfig.load, testcase_configs.py (web4hub/Sgl @ 4e66c7cc); PR #38457"
	const file = `{"tolerances": {"pr_test": {"e2e": 0.1, "denoise_stage": 0.2, "non_denoise_stage": 0.3, "denoise_step": 0.4, "denoise_agg": 0.5}},
 "sampling": {"step_fractions": [0.0, 1.0]},
 "scenarios": {
  "plain": {"expected_e2e_ms": 1.0, "expected_load_ms": 1000.0},
  "wide": {"expected_e2e_ms": 1.0, "expected_load_ms": 1000.0, "timing_tolerance": 0.9},
  "zero": {"expected_e2e_ms": 1.0, "timing_tolerance": 0}}}`
	f, err := Parse("h100.json", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	withLoad, err := Parse("h100.json", []byte(strings.Replace(file, `"denoise_agg": 0.5}`, `"denoise_agg": 0.5, "load": 0.4}`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	env := Overrides{"e2e": 0.61, "denoise_stage": 0.62, "non_denoise_stage": 0.63, "denoise_step": 0.64, "denoise_agg": 0.65, "runtime_peak_vram": 0.07}
	type tols = [8]float64 // e2e, denoise stage, non-denoise, step, agg, load, load peak, runtime peak
	get := func(f *File, scenario string, ov Overrides) tols {
		tol, err := f.Tolerances("pr_test", ov)
		if err != nil {
			t.Fatal(err)
		}
		pb, ok := f.Perf(scenario, tol, false)
		if !ok {
			t.Fatalf("no scenario %s", scenario)
		}
		_, load := f.ExpectedLoadMs(scenario, tol)
		if load != pb.Tol.Load {
			t.Errorf("%s: ExpectedLoadMs's tolerance %v, Perf's %v", scenario, load, pb.Tol.Load)
		}
		mb := f.Memory(scenario, tol)
		return tols{pb.Tol.E2E, pb.Tol.DenoiseStage, pb.Tol.NonDenoiseStage, pb.Tol.DenoiseStep, pb.Tol.DenoiseAgg, pb.Tol.Load, mb.LoadTol, mb.RuntimeTol}
	}
	for _, tt := range []struct {
		input string
		got   tols
		want  tols
	}{
		{"profile only", get(f, "plain", Overrides{}), tols{0.1, 0.2, 0.3, 0.4, 0.5, 0.1, 0.01, 0.02}},
		{"env over profile", get(f, "plain", env), tols{0.61, 0.62, 0.63, 0.64, 0.65, 0.61, 0.01, 0.07}},
		{"timing_tolerance over profile", get(f, "wide", Overrides{}), tols{0.9, 0.9, 0.9, 0.9, 0.9, 0.1, 0.01, 0.02}},
		{"timing_tolerance over env", get(f, "wide", env), tols{0.9, 0.9, 0.9, 0.9, 0.9, 0.61, 0.01, 0.07}},
		{"timing_tolerance 0 is a tolerance", get(f, "zero", Overrides{}), tols{0, 0, 0, 0, 0, 0.1, 0.01, 0.02}},
		{"the profile's load", get(withLoad, "wide", env), tols{0.9, 0.9, 0.9, 0.9, 0.9, 0.4, 0.01, 0.07}},
	} {
		if tt.got != tt.want {
			t.Errorf("%s (%s): %v, want %v", tt.input, source, tt.got, tt.want)
		}
	}
	bad := strings.Replace(file, `"timing_tolerance": 0.9}`, `"tolerance_overrides": {"e2e": 0.3}}`, 1)
	_, err = Parse("h100.json", []byte(bad))
	if err == nil || !strings.Contains(err.Error(), `h100.json:5: scenarios.wide.tolerance_overrides: not a key of SGLang's baseline files`) {
		t.Errorf("tolerance_overrides (%s): %v", source, err)
	}
}

// Rule: the limits at the edges, with SGLang's limit math (max(b·(1+tol), b+pad)): a scenario
// with timing_tolerance 0.5 passes an E2E 1.4 times its reference and fails one 1.6 times;
// under the default pr_test profile (e2e 0.25, no "load") a load 1.3 times its reference
// fails and one 1.2 times passes, as does the same load with a profile "load" of 0.5.
func TestTimingAndLoadLimitsAtTheEdges(t *testing.T) {
	const file = `{"tolerances": {"pr_test": {"e2e": 0.25, "denoise_stage": 0.25, "non_denoise_stage": 0.8, "denoise_step": 0.3, "denoise_agg": 0.2}},
 "sampling": {"step_fractions": [0.0, 1.0]},
 "scenarios": {"wide": {"stages_ms": {}, "denoise_step_ms": {}, "expected_e2e_ms": 10000.0, "expected_avg_denoise_ms": 100.0,
   "expected_median_denoise_ms": 100.0, "expected_load_ms": 100000.0, "timing_tolerance": 0.5}}}`
	for _, tt := range []struct {
		name      string
		profile   string // "" keeps the file's
		e2eMs     float64
		loadMs    float64
		e2e, load results.Status
	}{
		{"E2E 1.4x, load 1.2x", "", 14000, 120000, results.Pass, results.Pass},
		{"E2E 1.5x (the limit), load 1.25x (the limit)", "", 15000, 125000, results.Pass, results.Pass},
		{"E2E 1.6x, load 1.3x", "", 16000, 130000, results.Fail, results.Fail},
		{"load 1.3x with a profile load of 0.5", `"load": 0.5`, 14000, 130000, results.Pass, results.Pass},
	} {
		src := file
		if tt.profile != "" {
			src = strings.Replace(file, `"denoise_agg": 0.2}`, `"denoise_agg": 0.2, `+tt.profile+`}`, 1)
		}
		f, err := Parse("h100.json", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		tol, err := f.Tolerances("pr_test", Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		pb, _ := f.Perf("wide", tol, false)
		pb.LoadMs, pb.Tol.Load = f.ExpectedLoadMs("wide", tol)
		e2e := checks.PerfE2EOnly(results.RequestResult{ServerTotalMs: tt.e2eMs}, pb)
		load := checks.LoadTime(tt.loadMs, pb)
		if len(e2e) == 0 || e2e[0].Status != tt.e2e || len(load) != 1 || load[0].Status != tt.load {
			t.Errorf("%s: perf.e2e %v, perf.load %v; want %s and %s", tt.name, e2e, load, tt.e2e, tt.load)
		}
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
				var stages results.Stages
				for _, st := range pb.Stages {
					if !math.IsNaN(st.Ms) {
						stages = append(stages, st)
					}
				}
				base := results.RequestResult{ServerTotalMs: pb.E2EMs, Stages: stages, StepsMs: steps}
				try := func(what, check string, rr results.RequestResult, want results.Status) {
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
				okIf := func(b float64) results.Status {
					if b > 0 {
						return results.Pass
					}
					return results.Fail
				}
				l, over := at(pb.E2EMs, pb.Tol.E2E, checks.E2EPadMs)
				rr := base
				rr.ServerTotalMs = l
				try("e2e at the limit", checks.PerfE2E, rr, okIf(pb.E2EMs))
				rr.ServerTotalMs = over
				try("e2e one ulp over", checks.PerfE2E, rr, results.Fail)
				for _, agg := range []struct {
					check string
					b     float64
				}{{checks.PerfDenoiseAvg, pb.AvgDenoiseMs}, {checks.PerfDenoiseMedian, pb.MedianDenoiseMs}} {
					l, over := at(agg.b, pb.Tol.DenoiseAgg, checks.AggPadMs)
					rr := base
					rr.StepsMs = []float64{l, l}
					try(agg.check+" at the limit", agg.check, rr, okIf(agg.b))
					rr.StepsMs = []float64{over, over}
					try(agg.check+" one ulp over", agg.check, rr, results.Fail)
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
					try(name+" one ulp over", name, rr, results.Fail)
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
					try(name+" one ulp over", name, rr, results.Fail)
				}
			}
		}
	}
	t.Logf("%d verdicts on SGLang's real baselines, at the limit and one ulp over", n)
}
