package baselines

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// poolsFile is b200.json with runner pools, rebuilt from SGLang's tests (testdata/pools/SOURCES.md).
func poolsFile(t *testing.T) *File {
	t.Helper()
	f, err := Load("testdata/pools/b200.json")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// forRunner is f.ForRunner(runner), which must succeed.
func forRunner(t *testing.T, f *File, runner string) *File {
	t.Helper()
	g, err := f.ForRunner(runner)
	if err != nil {
		t.Fatalf("runner %q: %v", runner, err)
	}
	return g
}

// Rule: a runner whose RUNNER_NAME no runner_overrides prefix begins keeps the default
// references. Source: SGLang test_default_runner_baseline (after PR #39206, 2026-09-12).
func TestDefaultRunnerBaseline(t *testing.T) {
	f := poolsFile(t)
	for _, runner := range []string{"b200-fin03-4-4567", "b200-cirrascale2", "b200-cirrascale4-0123", "unknown", ""} {
		g := forRunner(t, f, runner)
		got := [2]float64{*g.Scenarios["flux1_modelopt_nvfp4_t2i"].E2EMs, *g.Scenarios["qwen_image_2512_modelopt_nvfp4_t2i"].E2EMs}
		if got != [2]float64{836.71, 9650.06} || g.InPool || g.PoolLabel() != "default pool" {
			t.Errorf("runner %q (test_default_runner_baseline): e2e %v, pool %q; want the default pool's 836.71, 9650.06", runner, got, g.Pool)
		}
	}
}

// Rule: a pool's overrides replace only the keys they name; every other value of every
// scenario, the tolerances and the step fractions stay the file's, and the file itself is not
// changed. Source: SGLang test_runner_override_preserves_other_metrics (after PR #39206).
func TestRunnerOverridePreservesOtherMetrics(t *testing.T) {
	f := poolsFile(t)
	before := string(f.Marshal())
	for _, tt := range []struct {
		runner, pool string
		flux, qwen   float64
	}{
		{"b200-di01-4567", "b200-di", 1334.16, 16126.87},
		{"b200-cirrascale1-0123", "b200-cirrascale1-0123", 1574.32, 17742.04},
		{"b200-cirrascale3-0123", "b200-cirrascale3-0123", 1470.24, 17894.49},
		{"b200-cirrascale3-4567", "b200-cirrascale3-4567", 1471.19, 17346.65},
	} {
		g := forRunner(t, f, tt.runner)
		if g.Pool != tt.pool || !g.InPool {
			t.Errorf("runner %s: pool %q, want %q", tt.runner, g.Pool, tt.pool)
		}
		want := map[string]float64{"flux1_modelopt_nvfp4_t2i": tt.flux, "qwen_image_2512_modelopt_nvfp4_t2i": tt.qwen}
		for id, s := range f.Scenarios {
			exp := *s
			if v, ok := want[id]; ok {
				exp.E2EMs = &v
			}
			if diff := cmp.Diff(&exp, g.Scenarios[id], cmp.Comparer(func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) })); diff != "" {
				t.Errorf("runner %s, scenario %s (test_runner_override_preserves_other_metrics) (-want +got):\n%s", tt.runner, id, diff)
			}
		}
		if diff := cmp.Diff(f.Profiles, g.Profiles); diff != "" || !cmp.Equal(f.StepFractions, g.StepFractions) {
			t.Errorf("runner %s: tolerances or step fractions changed (-want +got):\n%s", tt.runner, diff)
		}
	}
	if string(f.Marshal()) != before || *f.Scenarios["flux1_modelopt_nvfp4_t2i"].E2EMs != 836.71 {
		t.Error("ForRunner changed the file it was called on")
	}
}

// Limit-math vectors of runner pools: on each pool, an E2E 1 ms under the pool's limit
// passes and 1 ms over fails (SGLang test_runner_baseline_enforces_e2e_boundary); and the
// issue's case: 1300 ms on b200-di01-4567 passes against the DeepInfra reference where the
// default pool's limit (836.71 × 1.25 = 1045.89 ms) fails it.
func TestRunnerPoolLimitVectors(t *testing.T) {
	f := poolsFile(t)
	e2e := func(runner, id string, ms float64) results.Check {
		g := forRunner(t, f, runner)
		tol, err := g.Tolerances("pr_test", Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		pb, ok := g.Perf(id, tol, false)
		if !ok {
			t.Fatalf("no scenario %s", id)
		}
		return checks.PerfE2EOnly(results.RequestResult{ServerTotalMs: ms}, pb)[0]
	}
	for _, runner := range []string{"b200-di01-4567", "b200-fin03-4-4567", "b200-cirrascale1-0123", "b200-cirrascale3-0123", "b200-cirrascale3-4567"} {
		for _, id := range []string{"flux1_modelopt_nvfp4_t2i", "qwen_image_2512_modelopt_nvfp4_t2i"} {
			limit := *forRunner(t, f, runner).Scenarios[id].E2EMs * 1.25
			if c := e2e(runner, id, limit-1); c.Status != results.Pass {
				t.Errorf("%s %s at limit-1 (test_runner_baseline_enforces_e2e_boundary): %s %s", runner, id, c.Status, c.Detail)
			}
			if c := e2e(runner, id, limit+1); c.Status != results.Fail || !strings.Contains(c.Detail, "> limit") {
				t.Errorf("%s %s at limit+1 (test_runner_baseline_enforces_e2e_boundary): %s %s", runner, id, c.Status, c.Detail)
			}
		}
	}
	for _, tt := range []struct {
		runner string
		want   results.Status
		limit  float64
	}{
		{"b200-di01-4567", results.Pass, 1667.7},
		{"b200-fin03-4-4567", results.Fail, 1045.8875},
	} {
		c := e2e(tt.runner, "flux1_modelopt_nvfp4_t2i", 1300)
		if c.Status != tt.want || math.Abs(*c.Limit-tt.limit) > 1e-9 {
			t.Errorf("flux1 at 1300 ms on %s: %s, limit %v; want %s, limit %v", tt.runner, c.Status, *c.Limit, tt.want, tt.limit)
		}
	}
}

// Rule: runner_overrides applies as SGLang's BaselineConfig.load does (testcase_configs.py,
// web4hub/Sgl @ 4e66c7cc, on or after 2026-09-23): the first prefix in file order that
// RUNNER_NAME starts with wins, however long a later one is; an empty prefix matches every
// runner, an unset RUNNER_NAME too; an entry's keys replace the scenario's (a stages_ms the
// whole map, null an optional value); keys ScenarioConfig.from_dict does not read change
// nothing and are named in a warning; a scenario the file lacks, or a value that is not a
// number, fails the runs of that pool only, naming file, line, pool and scenario; only a
// runner_overrides that is not an object fails every runner.
func TestRunnerOverridesAsSGLangLoads(t *testing.T) {
	const head = `{"tolerances": {"e2e": 0.1, "denoise_stage": 0.1, "non_denoise_stage": 0.1, "denoise_step": 0.1, "denoise_agg": 0.1},
 "sampling": {"step_fractions": [0.0]},
 "scenarios": {"a": {"expected_e2e_ms": 1.0, "expected_load_ms": 5.0, "stages_ms": {"X": 1.0, "Y": 2.0}}},
 "runner_overrides": `
	parse := func(ro string) *File {
		t.Helper()
		f, err := Parse("x.json", []byte(head+ro))
		if err != nil {
			t.Fatalf("%s: %v", ro, err)
		}
		return f
	}
	e2e := func(g *File) float64 { return *g.Scenarios["a"].E2EMs }

	// First match in file order, not the longest.
	f := parse(`{"b200-di": {"a": {"expected_e2e_ms": 2.0}}, "b200-di01": {"a": {"expected_e2e_ms": 3.0}}}}`)
	if g := forRunner(t, f, "b200-di01-4567"); g.Pool != "b200-di" || e2e(g) != 2 {
		t.Errorf("two matching prefixes: pool %q, e2e %v; want the first, b200-di, 2", g.Pool, e2e(g))
	}
	f = parse(`{"b200-di01": {"a": {"expected_e2e_ms": 3.0}}, "b200-di": {"a": {"expected_e2e_ms": 2.0}}}}`)
	if g := forRunner(t, f, "b200-di01-4567"); g.Pool != "b200-di01" || e2e(g) != 3 {
		t.Errorf("longer prefix first: pool %q, e2e %v; want b200-di01, 3", g.Pool, e2e(g))
	}

	// The empty prefix: every runner, no RUNNER_NAME included; an earlier prefix still wins.
	f = parse(`{"b200-di": {"a": {"expected_e2e_ms": 2.0}}, "": {"a": {"expected_e2e_ms": 7.0}}}}`)
	for runner, want := range map[string]float64{"": 7, "anything": 7, "b200-di01": 2} {
		g := forRunner(t, f, runner)
		if e2e(g) != want || !g.InPool {
			t.Errorf("runner %q with an empty prefix last: e2e %v (in pool %v), want %v", runner, e2e(g), g.InPool, want)
		}
	}
	if g := forRunner(t, f, ""); g.PoolLabel() != `pool "" (every runner)` {
		t.Errorf("label of the empty prefix: %q", g.PoolLabel())
	}

	// Keys replace the scenario's: a map whole, null an optional value; unknown keys warn.
	f = parse(`{"p": {"a": {"stages_ms": {"Z": 9.0}, "expected_load_ms": null, "e2e": 4.0, "expected_e2e_ms_typo": 4.0}}}}`)
	g := forRunner(t, f, "p1")
	if diff := cmp.Diff(results.Stages{{Name: "Z", Ms: 9}}, g.Scenarios["a"].Stages); diff != "" {
		t.Errorf("stages_ms of a pool replaces the map (-want +got):\n%s", diff)
	}
	if g.Scenarios["a"].ExpectedLoadMs != nil || e2e(g) != 1 {
		t.Errorf("null clears expected_load_ms, e2e stays: load %v, e2e %v", g.Scenarios["a"].ExpectedLoadMs, e2e(g))
	}
	const ignored = `x.json: runner_overrides pool "p" sets keys no scenario has, which SGLang ignores too: a.e2e, a.expected_e2e_ms_typo`
	if len(g.Warnings) != 1 || !strings.Contains(g.Warnings[0], ignored) {
		t.Errorf("warnings: %q", g.Warnings)
	}
	if len(f.Scenarios["a"].Stages) != 2 || len(f.Warnings) != 0 || len(forRunner(t, f, "q").Warnings) != 0 {
		t.Error("ForRunner changed the file, or a runner of no pool got the pool's warnings")
	}

	// A pool that cannot be applied fails its runners only.
	for _, tt := range []struct{ ro, want string }{
		{`{"b200-di": {"nope": {"expected_e2e_ms": 2.0}}}}`, `x.json:4: runner_overrides."b200-di".nope: scenario "nope" is not under "scenarios"`},
		{`{"b200-di": {"a": {"expected_e2e_ms": -2.0}}}}`, `runner_overrides."b200-di".a.expected_e2e_ms: want a number ≥ 0`},
		{`{"b200-di": {"a": {"stages_ms": null}}}}`, `runner_overrides."b200-di".a.stages_ms: want an object, got null`},
		{`{"b200-di": [1]}}`, `runner_overrides."b200-di": want an object, got a list`},
	} {
		f := parse(tt.ro)
		if g := forRunner(t, f, "b200-fin03"); g.InPool {
			t.Errorf("%s: a runner of no pool is in pool %q", tt.ro, g.Pool)
		}
		_, err := f.ForRunner("b200-di01")
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `runner_overrides pool "b200-di" (RUNNER_NAME "b200-di01")`) {
			t.Errorf("%s: %v, want %q", tt.ro, err, tt.want)
		}
	}
	if _, err := Parse("x.json", []byte(head+`[]}`)); err == nil || !strings.Contains(err.Error(), "runner_overrides: want an object, got a list") {
		t.Errorf("runner_overrides a list: %v", err)
	}
}

// A regeneration on a runner of a pool writes that pool's entry (its E2E reference from the
// worst request), not the shared scenario: the default pool's references stay as they were.
func TestRegeneratePooled(t *testing.T) {
	f := poolsFile(t)
	res := func(pool string, e2e float64) *results.Result {
		return &results.Result{Files: &results.Files{Baselines: f.Path, Pool: pool, InPool: true, Runner: pool + "01-4567"},
			Cases: []results.CaseResult{{ID: "flux1_modelopt_nvfp4_t2i",
				Requests: []results.RequestResult{{Index: 1, Of: 2, ServerTotalMs: e2e - 10}, {Index: 2, Of: 2, ServerTotalMs: e2e}}}}}
	}
	reg, err := Regenerate(f, []*results.Result{res("b200-di", 1290.5)}, RegenerateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := reg.File
	if got := *forRunner(t, g, "b200-di01-4567").Scenarios["flux1_modelopt_nvfp4_t2i"].E2EMs; got != 1290.5 {
		t.Errorf("pool b200-di after regeneration: %v, want 1290.5", got)
	}
	if got := *g.Scenarios["flux1_modelopt_nvfp4_t2i"].E2EMs; got != 836.71 {
		t.Errorf("default pool after a pooled regeneration: %v, want 836.71 unchanged", got)
	}
	if got := *forRunner(t, g, "b200-cirrascale1-0123").Scenarios["flux1_modelopt_nvfp4_t2i"].E2EMs; got != 1574.32 {
		t.Errorf("another pool after regeneration: %v, want 1574.32 unchanged", got)
	}
	want := []Change{{Scenario: "flux1_modelopt_nvfp4_t2i", Metric: "runner_overrides.b200-di.expected_e2e_ms", Old: 1334.16, New: 1290.5}}
	if diff := cmp.Diff(want, reg.Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	// A new pool gets its own entry.
	reg, err = Regenerate(f, []*results.Result{res("b200-fin", 900)}, RegenerateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := forRunner(t, reg.File, "b200-fin03-4-4567"); g.Pool != "b200-fin" || *g.Scenarios["flux1_modelopt_nvfp4_t2i"].E2EMs != 900 {
		t.Errorf("new pool: %q %v", g.Pool, *g.Scenarios["flux1_modelopt_nvfp4_t2i"].E2EMs)
	}
}
