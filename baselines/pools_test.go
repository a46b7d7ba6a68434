package baselines

import (
	"math"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/google/go-cmp/cmp"
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

// Rule: a runner whose RUNNER_NAME no runner_overrides prefix begins keeps the default
// references. Source: SGLang test_default_runner_baseline (after PR #39206, 2026-09-12).
func TestDefaultRunnerBaseline(t *testing.T) {
	f := poolsFile(t)
	for _, runner := range []string{"b200-fin03-4-4567", "b200-cirrascale2", "b200-cirrascale4-0123", "unknown", ""} {
		g := f.ForRunner(runner)
		got := [2]float64{*g.Scenarios["flux1_modelopt_nvfp4_t2i"].E2EMs, *g.Scenarios["qwen_image_2512_modelopt_nvfp4_t2i"].E2EMs}
		if got != [2]float64{836.71, 9650.06} || g.Pool != "" || g.PoolLabel() != "default pool" {
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
		g := f.ForRunner(tt.runner)
		if g.Pool != tt.pool {
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
	e2e := func(runner, id string, ms float64) checks.Check {
		g := f.ForRunner(runner)
		tol, err := g.Tolerances("pr_test", Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		pb, ok := g.Perf(id, tol, false)
		if !ok {
			t.Fatalf("no scenario %s", id)
		}
		return checks.PerfE2EOnly(checks.RequestResult{ServerTotalMs: ms}, pb)[0]
	}
	for _, runner := range []string{"b200-di01-4567", "b200-fin03-4-4567", "b200-cirrascale1-0123", "b200-cirrascale3-0123", "b200-cirrascale3-4567"} {
		for _, id := range []string{"flux1_modelopt_nvfp4_t2i", "qwen_image_2512_modelopt_nvfp4_t2i"} {
			limit := *f.ForRunner(runner).Scenarios[id].E2EMs * 1.25
			if c := e2e(runner, id, limit-1); c.Status != checks.Pass {
				t.Errorf("%s %s at limit-1 (test_runner_baseline_enforces_e2e_boundary): %s %s", runner, id, c.Status, c.Detail)
			}
			if c := e2e(runner, id, limit+1); c.Status != checks.Fail || !strings.Contains(c.Detail, "> limit") {
				t.Errorf("%s %s at limit+1 (test_runner_baseline_enforces_e2e_boundary): %s %s", runner, id, c.Status, c.Detail)
			}
		}
	}
	for _, tt := range []struct {
		runner string
		want   checks.Status
		limit  float64
	}{
		{"b200-di01-4567", checks.Pass, 1667.7},
		{"b200-fin03-4-4567", checks.Fail, 1045.8875},
	} {
		c := e2e(tt.runner, "flux1_modelopt_nvfp4_t2i", 1300)
		if c.Status != tt.want || math.Abs(*c.Limit-tt.limit) > 1e-9 {
			t.Errorf("flux1 at 1300 ms on %s: %s, limit %v; want %s, limit %v", tt.runner, c.Status, *c.Limit, tt.want, tt.limit)
		}
	}
}

// The pool decoder rejects what SGLang's loader could not apply, each problem naming its line.
func TestRunnerOverridesErrors(t *testing.T) {
	const head = `{"tolerances": {"e2e": 0.1, "denoise_stage": 0.1, "non_denoise_stage": 0.1, "denoise_step": 0.1, "denoise_agg": 0.1},
 "sampling": {"step_fractions": [0.0]},
 "scenarios": {"a": {"expected_e2e_ms": 1.0}},
 "runner_overrides": `
	for _, tt := range []struct{ ro, want string }{
		{`{"b200-di": {"nope": {"expected_e2e_ms": 2.0}}}}`, `x.json:4: runner_overrides.b200-di.nope: scenario "nope" is not under "scenarios"`},
		{`{"b200-di": {"a": {"e2e": 2.0}}}}`, `x.json:4: runner_overrides.b200-di.a.e2e: not a key a pool can override`},
		{`{"b200-di": {"a": {"expected_e2e_ms": -2.0}}}}`, `runner_overrides.b200-di.a.expected_e2e_ms: want a number ≥ 0`},
		{`{"": {"a": {"expected_e2e_ms": 2.0}}}}`, `x.json:4: runner_overrides.: want a RUNNER_NAME prefix`},
		{`[]}`, `runner_overrides: want an object, got a list`},
	} {
		_, err := Parse("x.json", []byte(head+tt.ro))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.ro, err, tt.want)
		}
	}
	// Overlapping prefixes: the longest applies (reading).
	f, err := Parse("x.json", []byte(head+`{"b200-di": {"a": {"expected_e2e_ms": 2.0}}, "b200-di01": {"a": {"expected_e2e_ms": 3.0}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if g := f.ForRunner("b200-di01-4567"); g.Pool != "b200-di01" || *g.Scenarios["a"].E2EMs != 3 {
		t.Errorf("longest prefix: pool %q, e2e %v", g.Pool, *g.Scenarios["a"].E2EMs)
	}
}

// A regeneration on a runner of a pool writes that pool's entry (its E2E reference from the
// worst request), not the shared scenario: the default pool's references stay as they were.
func TestRegeneratePooled(t *testing.T) {
	f := poolsFile(t)
	res := func(pool string, e2e float64) *checks.Result {
		return &checks.Result{Files: &checks.Files{Baselines: f.Path, Pool: pool, Runner: pool + "01-4567"},
			Cases: []checks.CaseResult{{ID: "flux1_modelopt_nvfp4_t2i",
				Requests: []checks.RequestResult{{Index: 1, Of: 2, ServerTotalMs: e2e - 10}, {Index: 2, Of: 2, ServerTotalMs: e2e}}}}}
	}
	reg, err := Regenerate(f, []*checks.Result{res("b200-di", 1290.5)}, RegenerateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := reg.File
	if got := *g.ForRunner("b200-di01-4567").Scenarios["flux1_modelopt_nvfp4_t2i"].E2EMs; got != 1290.5 {
		t.Errorf("pool b200-di after regeneration: %v, want 1290.5", got)
	}
	if got := *g.Scenarios["flux1_modelopt_nvfp4_t2i"].E2EMs; got != 836.71 {
		t.Errorf("default pool after a pooled regeneration: %v, want 836.71 unchanged", got)
	}
	if got := *g.ForRunner("b200-cirrascale1-0123").Scenarios["flux1_modelopt_nvfp4_t2i"].E2EMs; got != 1574.32 {
		t.Errorf("another pool after regeneration: %v, want 1574.32 unchanged", got)
	}
	want := []Change{{Scenario: "flux1_modelopt_nvfp4_t2i", Metric: "runner_overrides.b200-di.expected_e2e_ms", Old: 1334.16, New: 1290.5}}
	if diff := cmp.Diff(want, reg.Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	// A new pool gets its own entry.
	reg, err = Regenerate(f, []*checks.Result{res("b200-fin", 900)}, RegenerateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := reg.File.ForRunner("b200-fin03-4-4567"); g.Pool != "b200-fin" || *g.Scenarios["flux1_modelopt_nvfp4_t2i"].E2EMs != 900 {
		t.Errorf("new pool: %q %v", g.Pool, *g.Scenarios["flux1_modelopt_nvfp4_t2i"].E2EMs)
	}
}
