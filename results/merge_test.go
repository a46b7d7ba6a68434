package results

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/judge"
)

func mergeCase(id, lane string, st checks.Status) checks.CaseResult {
	ck := checks.Passed(checks.OutputPresent, "")
	if st == checks.Fail {
		ck = checks.Failed(checks.OutputPresent, "no media")
	}
	return checks.CaseResult{ID: id, Lane: lane, Status: st, Requests: []checks.RequestResult{{Index: 1, Of: 1, Status: st, Checks: []checks.Check{ck}}}}
}

func TestMerge(t *testing.T) {
	p0 := &checks.Result{Schema: checks.Schema, Suite: "s", Lane: "base", GPU: "h100", Commit: "abc", Partition: checks.Partition{Index: 0, Total: 2},
		Cases: []checks.CaseResult{mergeCase("a", "base", checks.Pass), mergeCase("b", "base", checks.Pass)}}
	p1 := &checks.Result{Schema: checks.Schema, Suite: "s", Lane: "base", GPU: "h100", Commit: "abc", Partition: checks.Partition{Index: 1, Total: 2},
		Cases: []checks.CaseResult{mergeCase("c", "base", checks.Fail)}, Errors: []string{"disk full"}}
	// No --lane: the cases carry their lanes; one without a lane goes to "default".
	all := &checks.Result{Schema: checks.Schema, Suite: "s", Commit: "abc", Partition: checks.Partition{Index: 0, Total: 1},
		Cases: []checks.CaseResult{mergeCase("x", "extra", checks.Pass), mergeCase("y", "", checks.Pass)}}
	// p0 again, as a folder and as a file: identical, so merged once.
	got, err := mergeJudged([]Input{{"p1.json", p1}, {"p0.json", p0}, {"all.json", all}, {"dir/results.json", p0}})
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Lane, GPU string
		Total     int
		Status    checks.Status
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
		{Lane: "base", GPU: "h100", Total: 2, Status: checks.Fail, Cases: []string{"a:pass", "b:pass", "c:fail"}, Errors: []string{"p1.json: disk full"}},
		{Lane: "default", Total: 1, Status: checks.Pass, Cases: []string{"y:pass"}},
		{Lane: "extra", Total: 1, Status: checks.Pass, Cases: []string{"x:pass"}},
	}
	if diff := cmp.Diff(want, views); diff != "" {
		t.Errorf("merged lanes (-want +got):\n%s", diff)
	}
}

func TestMergeConflicts(t *testing.T) {
	a := &checks.Result{Schema: checks.Schema, Suite: "s", Lane: "base", Commit: "abc", Cases: []checks.CaseResult{mergeCase("a", "base", checks.Pass)}}
	b := &checks.Result{Schema: checks.Schema, Suite: "s", Lane: "base", Commit: "abc", Cases: []checks.CaseResult{mergeCase("a", "base", checks.Fail)}}
	c := &checks.Result{Schema: checks.Schema, Suite: "s", Lane: "base", Commit: "def", Cases: []checks.CaseResult{mergeCase("z", "base", checks.Pass)}}
	_, err := mergeJudged([]Input{{"one/results.json", a}, {"two/results.json", b}, {"three/results.json", c}})
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
	got, err := mergeJudged([]Input{{"r.json", &checks.Result{Schema: checks.Schema, Lane: "amd", Errors: []string{"no GPU"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Lane != "amd" || got[0].Status != checks.Error {
		t.Errorf("got %+v, want one errored lane amd", got)
	}
}

// TestMergeMachines: a merged lane lists each partition's machine once, by partition; a
// partition without one (an old file) adds none.
func TestMergeMachines(t *testing.T) {
	part := func(i int, m *checks.Machine, id string) *checks.Result {
		return &checks.Result{Schema: checks.Schema, Suite: "s", Lane: "base", Commit: "abc", Partition: checks.Partition{Index: i, Total: 3}, Machine: m,
			Cases: []checks.CaseResult{mergeCase(id, "base", checks.Pass)}}
	}
	fast, slow := &checks.Machine{Partition: 0, RunnerName: "b200-verda-1"}, &checks.Machine{Partition: 2, RunnerName: "b200-cirrascale3-0123"}
	got, err := mergeJudged([]Input{{"p2.json", part(2, slow, "c")}, {"p1.json", part(1, nil, "b")}, {"p0.json", part(0, fast, "a")},
		{"again.json", part(0, fast, "a")}})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]checks.Machine{*fast, *slow}, got[0].Machines); d != "" {
		t.Errorf("Machines (-want +got):\n%s", d)
	}
}

// mergeJudged is Merge with each lane's status set as cmd sets it (judge.LaneStatus): the
// statuses these tests assert are the judge's, over what Merge gathered.
func mergeJudged(inputs []Input) ([]checks.Result, error) {
	lanes, err := Merge(inputs)
	for i := range lanes {
		lanes[i].Status = judge.LaneStatus(&lanes[i])
	}
	return lanes, err
}
