package results_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"
)

func mergeCase(id, lane string, st results.Status) results.CaseResult {
	ck := checks.Passed(results.OutputPresent, "")
	if st == results.Fail {
		ck = checks.Failed(results.OutputPresent, "no media")
	}
	return results.CaseResult{ID: id, Lane: lane, Status: st, Requests: []results.RequestResult{{Index: 1, Of: 1, Status: st, Checks: []results.Check{ck}}}}
}

func TestMerge(t *testing.T) {
	p0 := &results.Result{Schema: results.Schema, Suite: "s", Lane: "base", GPU: "h100", Commit: "abc", Partition: results.Partition{Index: 0, Total: 2},
		Cases: []results.CaseResult{mergeCase("a", "base", results.Pass), mergeCase("b", "base", results.Pass)}}
	p1 := &results.Result{Schema: results.Schema, Suite: "s", Lane: "base", GPU: "h100", Commit: "abc", Partition: results.Partition{Index: 1, Total: 2},
		Cases: []results.CaseResult{mergeCase("c", "base", results.Fail)}, Errors: []string{"disk full"}}
	// No --lane: the cases carry their lanes; one without a lane goes to "default".
	all := &results.Result{Schema: results.Schema, Suite: "s", Commit: "abc", Partition: results.Partition{Index: 0, Total: 1},
		Cases: []results.CaseResult{mergeCase("x", "extra", results.Pass), mergeCase("y", "", results.Pass)}}
	// p0 again, as a folder and as a file: identical, so merged once.
	got, err := mergeJudged([]results.Input{{"p1.json", p1}, {"p0.json", p0}, {"all.json", all}, {"dir/results.json", p0}})
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Lane, GPU string
		Total     int
		Status    results.Status
		Cases     []string
		Errors    []string
	}
	var views []view
	for _, r := range got {
		v := view{Lane: r.Lane, GPU: r.GPU, Total: r.Partition.Total, Status: r.Status, Errors: r.Errors}
		for _, c := range r.Cases {
			v.Cases = append(v.Cases, c.ID+":"+string(c.Status))
		}
		views = append(views, v)
	}
	want := []view{
		{Lane: "base", GPU: "h100", Total: 2, Status: results.Fail, Cases: []string{"a:pass", "b:pass", "c:fail"}, Errors: []string{"p1.json: disk full"}},
		{Lane: "default", Total: 1, Status: results.Pass, Cases: []string{"y:pass"}},
		{Lane: "extra", Total: 1, Status: results.Pass, Cases: []string{"x:pass"}},
	}
	if diff := cmp.Diff(want, views); diff != "" {
		t.Errorf("merged lanes (-want +got):\n%s", diff)
	}
}

func TestMergeConflicts(t *testing.T) {
	a := &results.Result{Schema: results.Schema, Suite: "s", Lane: "base", Commit: "abc", Cases: []results.CaseResult{mergeCase("a", "base", results.Pass)}}
	b := &results.Result{Schema: results.Schema, Suite: "s", Lane: "base", Commit: "abc", Cases: []results.CaseResult{mergeCase("a", "base", results.Fail)}}
	c := &results.Result{Schema: results.Schema, Suite: "s", Lane: "base", Commit: "def", Cases: []results.CaseResult{mergeCase("z", "base", results.Pass)}}
	_, err := mergeJudged([]results.Input{{"one/results.json", a}, {"two/results.json", b}, {"three/results.json", c}})
	if err == nil {
		t.Fatal("no error for conflicting results")
	}
	for _, want := range []string{
		"lane base case a: one/results.json and two/results.json hold different results",
		"one/results.json tested commit abc but three/results.json tested def",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestMergeEmptyRun(t *testing.T) {
	got, err := mergeJudged([]results.Input{{"r.json", &results.Result{Schema: results.Schema, Lane: "amd", Errors: []string{"no GPU"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Lane != "amd" || got[0].Status != results.Error {
		t.Errorf("got %+v, want one errored lane amd", got)
	}
}

// TestMergeMachines: a merged lane lists each partition's machine once, by partition; a
// partition without one (an old file) adds none.
func TestMergeMachines(t *testing.T) {
	part := func(i int, m *results.Machine, id string) *results.Result {
		return &results.Result{Schema: results.Schema, Suite: "s", Lane: "base", Commit: "abc", Partition: results.Partition{Index: i, Total: 3}, Machine: m,
			Cases: []results.CaseResult{mergeCase(id, "base", results.Pass)}}
	}
	fast, slow := &results.Machine{Partition: 0, RunnerName: "b200-verda-1"}, &results.Machine{Partition: 2, RunnerName: "b200-cirrascale3-0123"}
	got, err := mergeJudged([]results.Input{{"p2.json", part(2, slow, "c")}, {"p1.json", part(1, nil, "b")}, {"p0.json", part(0, fast, "a")},
		{"again.json", part(0, fast, "a")}})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]results.Machine{*fast, *slow}, got[0].Machines); d != "" {
		t.Errorf("Machines (-want +got):\n%s", d)
	}
}

// mergeJudged is Merge with each lane's status set as cmd sets it (judge.LaneStatus): the
// statuses these tests assert are the judge's, over what Merge gathered.
func mergeJudged(inputs []results.Input) ([]results.Result, error) {
	lanes, err := results.Merge(inputs)
	for i := range lanes {
		lanes[i].Status = judge.LaneStatus(&lanes[i])
	}
	return lanes, err
}
