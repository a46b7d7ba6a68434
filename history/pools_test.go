package history

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// poolRun is a default-branch run of case a on runner, whose requests' median E2E is e2e.
func poolRun(i int, runner string, e2e float64) *Run {
	return &Run{Schema: storeSchema, Suite: "s", GPU: "b200", Runner: runner, Commit: fmt.Sprintf("c%03d", i), Kind: KindDefault,
		RunID: fmt.Sprint(i), Date: t0.Add(time.Duration(i) * time.Hour), Status: results.Pass,
		Cases: []Case{{ID: "a", Metrics: []Metric{{Name: checks.PerfE2E, Unit: "ms", Value: e2e * 1.02, Median: e2e, N: 3,
			Baseline: checks.Float(1000), Limit: checks.Float(1250)}}}}}
}

func TestPoolsProposeAnOverrideForTheSlowPoolOnly(t *testing.T) {
	var runs []*Run
	for i := range 10 {
		jitter := float64(i%4) * 7 // noise within each pool
		runs = append(runs, poolRun(2*i, "b200-verda-0001", 990+jitter), poolRun(2*i+1, "b200-cirrascale3-0123", 1690+jitter))
	}
	runs = append(runs, poolRun(40, "b200-di01-4567", 1300), poolRun(41, "b200-di02-0123", 1320))
	shared := func(id, metric string) (float64, bool) { return 1000, id == "a" && metric == checks.PerfE2E }
	rule := DefaultPoolRule
	rule.Prefixes = []string{"b200-di", "b200-cirrascale3-0123"}
	out := Pools(runs, Series{Suite: "s", GPU: "b200"}, rule, shared)
	if len(out.Overrides) != 1 {
		t.Fatalf("%d overrides, want 1 (the slow pool): %+v\nchecked: %q", len(out.Overrides), out.Overrides, out.Checked)
	}
	o := out.Overrides[0]
	if o.Prefix != "b200-cirrascale3-0123" || o.Value != 1690 || o.Shared != 1000 || math.Abs(o.Tolerance-0.25) > 1e-12 || o.Limit != 2112.5 ||
		len(o.Runs) != 10 || o.RestRuns != 12 {
		t.Errorf("override %+v: want the minimum observed 1690 ms, tolerance 25%% unchanged, limit 1690 × 1.25", o)
	}
	for _, r := range o.Runs {
		if !r.Passes || r.Runner != "b200-cirrascale3-0123" {
			t.Errorf("run %s: %+v, want within the pool's limit", r.Run.RunID, r)
		}
	}
	if o.P >= 0.001 {
		t.Errorf("p = %g for two pools apart, want < 0.001", o.P)
	}
	if d := cmp.Diff([]TooNew{{Prefix: "b200-di", Runners: []string{"b200-di01-4567", "b200-di02-0123"}, Runs: 2}}, out.TooNew); d != "" {
		t.Errorf("too new (-want +got):\n%s", d)
	}
	if !strings.Contains(strings.Join(out.Checked, "\n"), "b200-verda-0001 a: not slower than the other pools") {
		t.Errorf("the fast pool is not said to be checked: %q", out.Checked)
	}
	wantJSON := "{\n    \"runner_overrides\": {\n        \"b200-cirrascale3-0123\": {\n            \"a\": {\"expected_e2e_ms\": 1690.00}\n        }\n    }\n}\n"
	if d := cmp.Diff(wantJSON, string(out.OverridesJSON())); d != "" {
		t.Errorf("OverridesJSON (-want +got):\n%s", d)
	}
	md := PoolsMarkdown(Series{Suite: "s", GPU: "b200"}, "b200.json", rule, out, "")
	for _, want := range []string{"| `b200-cirrascale3-0123` | `a` | 1000 ms | 1690 ms | ×1.69 | 25.0% | 2112 ms |",
		"The 10 runs behind <code>b200-cirrascale3-0123</code>", "| `c001` |", "yes (the minimum)",
		"- `b200-di`: `b200-di01-4567`, `b200-di02-0123` (2 runs)"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestPoolsNeverTouchTheSharedValue: noise alone (every runner alike) proposes nothing, and
// a slow pool whose fastest run is within the shared value gets no override.
func TestPoolsNoiseAndSharedValue(t *testing.T) {
	var runs []*Run
	for i := range 12 {
		runs = append(runs, poolRun(2*i, "r-a", 1000+float64(i%5)*11), poolRun(2*i+1, "r-b", 1000+float64((i+2)%5)*11))
	}
	shared := func(string, string) (float64, bool) { return 1000, true }
	if out := Pools(runs, Series{Suite: "s", GPU: "b200"}, DefaultPoolRule, shared); len(out.Overrides) != 0 || len(out.TooNew) != 0 {
		t.Errorf("noise: %+v", out)
	}
	high := func(string, string) (float64, bool) { return 5000, true }
	for i := range 6 {
		runs = append(runs, poolRun(100+i, "r-slow", 2000))
	}
	out := Pools(runs, Series{Suite: "s", GPU: "b200"}, DefaultPoolRule, high)
	if len(out.Overrides) != 0 || !strings.Contains(strings.Join(out.Checked, "\n"), "r-slow a: slower than the other pools (×1.96") {
		t.Errorf("a slow pool within the shared value: %+v", out)
	}
}

// TestMannWhitneyGreater: five values wholly above five others, U = 25, p = 0.0061 (the
// normal approximation with continuity correction: z = (25 − 12.5 − 0.5) / √(25 · 11 / 12));
// all ties give p = 0.5 or more, never a difference.
func TestMannWhitneyGreater(t *testing.T) {
	u, p := mannWhitneyGreater([]float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5})
	if u != 25 || math.Abs(p-0.5*math.Erfc(12/math.Sqrt(25.0*11/12)/math.Sqrt2)) > 1e-12 || math.Abs(p-0.0061) > 0.0001 {
		t.Errorf("U = %g, p = %g; want 25, 0.0061", u, p)
	}
	if _, p := mannWhitneyGreater([]float64{5, 5, 5}, []float64{5, 5, 5}); p < 0.5 {
		t.Errorf("all ties: p = %g, want ≥ 0.5", p)
	}
}

func TestPoolOf(t *testing.T) {
	prefixes := []string{"b200-di", "b200-cirrascale3", "b200-cirrascale3-0123"}
	for name, want := range map[string]string{"b200-di01-4567": "b200-di", "b200-cirrascale3-0123": "b200-cirrascale3-0123",
		"b200-cirrascale3-4567": "b200-cirrascale3", "b200-fin03-4-4567": "b200-fin03-4-4567"} {
		if got := poolOf(name, prefixes); got != want {
			t.Errorf("poolOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestRunnerNote(t *testing.T) {
	var runs []*Run
	for i := range 10 {
		jitter := float64(i%4) * 7
		fast := poolRun(2*i, "b200-verda-0001", 990+jitter)
		slow := poolRun(2*i+1, "b200-cirrascale3-0123", 1000+jitter)
		if i >= 6 { // the slow runner became slow with run 13
			slow = poolRun(2*i+1, "b200-cirrascale3-0123", 1690+jitter)
		}
		runs = append(runs, fast, slow)
	}
	s := Series{Suite: "s", GPU: "b200"}
	// Its values: 1000 … 1021 then 1690 … 1711 (worst = median × 1.02).
	got := runnerNote(runs, s, "b200-cirrascale3-0123", "a", checks.PerfE2E, 1740, 10)
	want := "this runner (b200-cirrascale3-0123) has been slower than its pool since 2026-11-02 (c013): its last 10 runs 1020–1745 ms, the pool's (10 runs of " +
		"1 other runner) 1010–1031 ms"
	if got != want {
		t.Errorf("runnerNote =\n%q\nwant\n%q", got, want)
	}
	for _, tc := range []struct {
		name, runner string
		value        float64
		want         string
	}{
		{"a value beyond the runner's own spread is the change's", "b200-cirrascale3-0123", 5000, ""},
		{"a value within the pool's spread", "b200-cirrascale3-0123", 1020, ""},
		{"the fast runner", "b200-verda-0001", 1740, ""},
		{"a new runner", "b200-di01-4567", 1740,
			"new runner b200-di01-4567: 0 runs of this case in the base branch's history, 5 needed to compare it with its pool"},
		{"no runner", "", 1740, ""},
	} {
		if got := runnerNote(runs, s, tc.runner, "a", checks.PerfE2E, tc.value, 10); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestRunnerOfCase(t *testing.T) {
	lane := &results.Result{Planned: [][]string{{"a", "b"}, {"c"}}, Machines: []results.Machine{{Partition: 0, RunnerName: "r0"}, {Partition: 1,
		RunnerName: "r1"}}}
	for id, want := range map[string]string{"a": "r0", "c": "r1", "x": ""} {
		if got := runnerOfCase(lane, id); got != want {
			t.Errorf("runnerOfCase(%s) = %q, want %q", id, got, want)
		}
	}
	if got := runnerOfCase(&results.Result{Machines: []results.Machine{{RunnerName: "only"}}}, "a"); got != "only" {
		t.Errorf("one partition, no plan: %q", got)
	}
}

// TestPoolOverrideObeysSGLangsBoundary: the pool's value under the shared tolerance gives the
// limit that checks' E2E verdict enforces, as SGLang's test_runner_baseline_enforces_e2e_boundary
// asks of a runner's baseline: one millisecond under the limit passes, one over fails.
func TestPoolOverrideObeysSGLangsBoundary(t *testing.T) {
	var runs []*Run
	for i := range 6 {
		runs = append(runs, poolRun(2*i, "fast-1", 1000+float64(i)), poolRun(2*i+1, "slow-1", 1600+float64(i)))
	}
	out := Pools(runs, Series{Suite: "s", GPU: "b200"}, DefaultPoolRule, func(string, string) (float64, bool) { return 1000, true })
	if len(out.Overrides) != 1 {
		t.Fatalf("%d overrides, want 1", len(out.Overrides))
	}
	o := out.Overrides[0]
	b := checks.PerfBaseline{Scenario: "a", E2EMs: o.Value, Tol: checks.PerfTolerances{E2E: o.Tolerance}}
	for _, tc := range []struct {
		ms   float64
		want results.Status
	}{{o.Limit - 1, results.Pass}, {o.Limit + 1, results.Fail}} {
		got := checks.PerfE2EOnly(results.RequestResult{ServerTotalMs: tc.ms}, b)
		if len(got) != 1 || got[0].Status != tc.want || *got[0].Limit != o.Limit {
			t.Errorf("E2E %g ms against the pool's %g ms: %+v, want %s with limit %g", tc.ms, o.Value, got, tc.want, o.Limit)
		}
	}
}
