package history

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

var t0 = time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)

func perfCheck(name string, v, baseline, limit float64) results.Check {
	return results.Check{Name: name, Status: results.Pass, Unit: "ms", Value: checks.Float(v), Baseline: checks.Float(baseline), Limit: checks.Float(limit)}
}

// result is a run of one case whose requests measured e2e (one value per request).
func result(id string, e2e ...float64) *results.Result {
	cr := results.CaseResult{ID: id, Status: results.Pass}
	for i, v := range e2e {
		cr.Requests = append(cr.Requests, results.RequestResult{Index: i + 1, Of: len(e2e), Status: results.Pass, Checks: []results.Check{
			{Name: results.ServerAlive, Status: results.Pass},
			{Name: results.PerfRecord, Status: results.Pass, Unit: "ms", Value: checks.Float(v)},
			perfCheck(checks.PerfE2E, v, 100, 125),
			perfCheck(checks.PerfStagePrefix+"DenoisingStage", v/2, 50, 170),
			perfCheck(checks.PerfStepPrefix+"0", 3, 3, 23),
			{Name: checks.ConsistencySSIM, Status: results.Pass, Value: checks.Float(0.99), Limit: checks.Float(0.98)},
		}})
	}
	return &results.Result{Schema: results.Schema, Suite: "s", GPU: "h200", Status: results.Pass, FinishedAt: t0, Cases: []results.CaseResult{cr}}
}

func TestFromResultsKeepsWorstValueMedianAndFirstRequestsBaseline(t *testing.T) {
	r := result("a", 90, 110, 95)
	// Memory growth rewrites request 2's limit to request 1's peak: not the baseline.
	r.Cases[0].Requests[1].Checks = append(r.Cases[0].Requests[1].Checks, results.Check{Name: checks.MemoryRuntimePeak, Source: checks.SourceServerReserved,
		Status: results.Fail, Unit: "MiB", Value: checks.Float(4000), Baseline: checks.Float(3400), Limit: checks.Float(3468)})
	r.Cases[0].Requests[0].Checks = append(r.Cases[0].Requests[0].Checks, results.Check{Name: checks.MemoryRuntimePeak, Source: checks.SourceServerReserved,
		Status: results.Pass, Unit: "MiB", Value: checks.Float(3400), Baseline: checks.Float(3500), Limit: checks.Float(3628)})
	run, err := FromResults([]*results.Result{r}, Meta{Commit: "abc", Kind: KindDefault, RunID: "1-1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Metric{
		{Name: "perf.e2e", Unit: "ms", Value: 110, Median: 95, N: 3, Baseline: checks.Float(100), Limit: checks.Float(125)},
		{Name: "perf.stage.DenoisingStage", Unit: "ms", Value: 55, Median: 47.5, N: 3, Baseline: checks.Float(50), Limit: checks.Float(170)},
		{Name: "memory.runtime_peak/server_reserved", Unit: "MiB", Value: 4000, Median: 3700, N: 2, Baseline: checks.Float(3500), Limit: checks.Float(3628)},
	}
	if diff := cmp.Diff(want, run.Cases[0].Metrics); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if run.Date != t0 || run.Suite != "s" || run.GPU != "h200" || run.Commit != "abc" {
		t.Errorf("run metadata: %+v", run)
	}
}

func TestFromResultsRefusesResultsOfTwoSeries(t *testing.T) {
	a, b := result("a", 1), result("b", 1)
	b.Lane = "extra"
	_, err := FromResults([]*results.Result{a, b}, Meta{Commit: "c", Kind: KindDefault, RunID: "1"})
	if err == nil || !strings.Contains(err.Error(), "one history entry is one suite, lane and GPU class") {
		t.Fatalf("err = %v", err)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	r := &Run{Schema: "x", Kind: KindPR, Suite: strings.Repeat("s", maxStringBytes+1), Cases: []Case{
		{ID: "a", Metrics: []Metric{{Name: "perf.e2e", Value: -1, N: 0}, {Name: "perf.e2e", Value: 1, N: 1}}},
		{ID: "a"},
	}}
	err := r.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`schema "x"`, "suite: longer than 200 bytes", "commit: empty", "run_id: empty", "pr: want the pull request's number",
		"date: missing", "want finite numbers from 0 to 1e+15, got -1", "n: want ≥ 1, got 0", `"perf.e2e" twice`, `cases[1].id: "a" twice`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestFromResultsKeepsMachines: each partition's machine is kept, and each case names the
// runner of its partition; the run's runner is theirs when they agree.
func TestFromResultsKeepsMachines(t *testing.T) {
	a, b, old := result("a", 100), result("b", 100), result("c", 100)
	a.Machine = &results.Machine{Partition: 1, RunnerName: "b200-verda-7", Hostname: "h7", GPUs: []results.MachineGPU{{Name: "NVIDIA B200", UUID: "GPU-7"}}}
	b.Machine = &results.Machine{Partition: 0, RunnerName: "b200-verda-7", Hostname: "h7"}
	run, err := FromResults([]*results.Result{a, b}, Meta{Commit: "c", Kind: KindDefault, RunID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]results.Machine{*b.Machine, *a.Machine}, run.Machines); d != "" {
		t.Errorf("machines (-want +got):\n%s", d)
	}
	if run.Runner != "b200-verda-7" || run.Cases[0].Runner != "b200-verda-7" {
		t.Errorf("runner %q, case runner %q: want b200-verda-7", run.Runner, run.Cases[0].Runner)
	}
	// A partition without a machine (an old results file) beside one with: the run names no
	// runner, the case that recorded one keeps it.
	b.Machine = &results.Machine{Partition: 0, RunnerName: "b200-cirrascale3-0123"}
	run, err = FromResults([]*results.Result{a, b, old}, Meta{Commit: "c", Kind: KindDefault, RunID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range run.Cases {
		got[c.ID] = run.RunnerOf(&c)
	}
	if d := cmp.Diff(map[string]string{"a": "b200-verda-7", "b": "b200-cirrascale3-0123", "c": ""}, got); d != "" || run.Runner != "" {
		t.Errorf("runner %q; case runners (-want +got):\n%s", run.Runner, d)
	}
}

// TestValidateBoundsMachines: a store file's machines are untrusted too.
func TestValidateBoundsMachines(t *testing.T) {
	long := strings.Repeat("x", maxStringBytes+1)
	r := &Run{Schema: storeSchema, Suite: "s", Commit: "c", RunID: "1", Kind: KindDefault, Date: t0,
		Machines: []results.Machine{{Hostname: long}, {GPUs: make([]results.MachineGPU, 65)}},
		Cases:    []Case{{ID: "a", Runner: long, Metrics: []Metric{{Name: "perf.e2e", Value: 1, Median: 1, N: 1}}}}}
	err := r.Validate()
	for _, want := range []string{
		"machines[0]: a field longer than 200 bytes",
		"machines[1]: at most 64 labels and 64 GPUs",
		"cases[0].runner: longer than 200 bytes",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	r.Machines = make([]results.Machine, maxMachines+1)
	if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "machines: 257, at most 256") {
		t.Errorf("257 machines: %v", err)
	}
}
