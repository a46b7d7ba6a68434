package results_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/results"
)

// planPart is partition i of plan h1 of planned, which left out desel, holding cases.
func planPart(planned [][]string, i int, desel []results.Deselected, cases ...string) *results.Result {
	r := &results.Result{PlanHash: "h1", Planned: planned, Deselected: desel, Partition: results.Partition{Index: i, Total: len(planned)}}
	for _, c := range cases {
		r.Cases = append(r.Cases, results.CaseResult{ID: c})
	}
	return r
}

func TestPlanProblems(t *testing.T) {
	planned := [][]string{{"a", "b"}, {"c"}, {"d"}}
	part := func(i int, cases ...string) *results.Result { return planPart(planned, i, nil, cases...) }
	for _, tc := range []struct {
		name   string
		inputs []results.Input
		want   []string
	}{
		{"complete", []results.Input{{"p0", part(0, "a", "b")}, {"p1", part(1, "c")}, {"p2", part(2, "d")}}, nil},
		{"missing partition", []results.Input{{"p0", part(0, "a", "b")}, {"p2", part(2, "d")}},
			[]string{"partition 1/3 of plan h1 never reported: its cases c did not run"}},
		{"missing case", []results.Input{{"p0", part(0, "a")}, {"p1", part(1, "c")}, {"p2", part(2, "d")}},
			[]string{"p0: planned case b of partition 0/3 has no result"}},
		{"case outside its partition", []results.Input{{"p0", part(0, "a", "b")}, {"p1", part(1, "c", "d")}, {"p2", part(2, "d")}},
			[]string{"case d ran twice: p1 and p2", "p1: case d ran in partition 1/3, which the plan does not give it"}},
		{"partition twice", []results.Input{{"p0", part(0, "a", "b")}, {"p0b", part(0, "a", "b")}, {"p1", part(1, "c")}, {"p2", part(2, "d")}},
			[]string{"partition 0/3 reported twice: p0 and p0b"}},
		{"same file twice is one report", []results.Input{{"p0", part(0, "a", "b")}, {"p0", part(0, "a", "b")}, {"p1", part(1, "c")}, {"p2", part(2, "d")}},
			nil},
		{"wrong total",
			[]results.Input{{"p0", &results.Result{PlanHash: "h1", Planned: planned, Partition: results.Partition{Index: 0, Total: 2}}}, {"p1", part(1, "c")},
				{"p2",
					part(2, "d")}},
			[]string{"p0: partition 0/2 does not fit plan h1 of 3 partitions", "partition 0/3 of plan h1 never reported: its cases a, b did not run"}},
		{"unplanned run is not checked", []results.Input{{"x", &results.Result{Cases: []results.CaseResult{{ID: "z"}}}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := results.PlanProblems(tc.inputs)["h1"]
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeMissingPartitionIsALaneError(t *testing.T) {
	planned := [][]string{{"a"}, {"b"}}
	pass := []results.Check{{Name: results.ServerAlive, Status: results.Pass}}
	r0 := &results.Result{Schema: results.Schema, Suite: "s", Lane: "base", PlanHash: "h", Planned: planned, Partition: results.Partition{Index: 0, Total: 2},
		Cases: []results.CaseResult{{ID: "a", Requests: []results.RequestResult{{Index: 1, Of: 1, Checks: pass}}}}}
	got, err := mergeJudged([]results.Input{{"results-0/results.json", r0}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Status != results.Error {
		t.Fatalf("merged status %v, want one lane with status error", got)
	}
	if want := []string{"partition 1/2 of plan h never reported: its cases b did not run"}; !cmp.Equal(want, got[0].Errors) {
		t.Errorf("errors %q, want %q", got[0].Errors, want)
	}
}

func TestPlanProblemsDeselected(t *testing.T) {
	planned := [][]string{{"a"}, {"b"}}
	left := []results.Deselected{{Case: "x", Lane: "base", Reason: "no changed path matches paths: models/x/**"}}
	part := func(i int, desel []results.Deselected, cases ...string) *results.Result {
		return planPart(planned, i, desel, cases...)
	}
	for _, tc := range []struct {
		name   string
		inputs []results.Input
		want   []string
	}{
		{"deselected cases are neither missing nor unplanned", []results.Input{{"p0", part(0, left, "a")}, {"p1", part(1, left, "b")}}, nil},
		{"a deselected case that ran", []results.Input{{"p0", part(0, left, "a", "x")}, {"p1", part(1, left, "b")}},
			[]string{"p0: case x ran in partition 0/2, but the plan deselected it"}},
		{"partitions that disagree on what was left out", []results.Input{{"p0", part(0, left, "a")}, {"p1", part(1, nil, "b")}},
			[]string{"p0 and p1 claim plan h1 but list different deselected cases", "partition 1/2 of plan h1 never reported: its cases b did not run"}},
		{"another reason is another selection", []results.Input{{"p0", part(0, left, "a")}, {"p1", part(1, []results.Deselected{{Case: "x", Lane: "base",
			Reason: "other"}}, "b")}},
			[]string{"p0 and p1 claim plan h1 but list different deselected cases", "partition 1/2 of plan h1 never reported: its cases b did not run"}},
		{"a case both planned and deselected", []results.Input{{"p0", part(0, []results.Deselected{{Case: "b"}}, "a")}, {"p1", part(1,
			[]results.Deselected{{Case: "b"}}, "b")}},
			[]string{"p0: case b is both planned and deselected in plan h1", "p1: case b ran in partition 1/2, but the plan deselected it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, results.PlanProblems(tc.inputs)["h1"]); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeDeselected(t *testing.T) {
	pass := []results.Check{{Name: results.ServerAlive, Status: results.Pass}}
	sel := &results.Selection{Source: "--changed-files c.txt", ChangedFiles: 2, Selected: 1, Of: 3}
	left := []results.Deselected{{Case: "b", Lane: "base", Reason: "r1"}, {Case: "e", Lane: "extra", Reason: "r2"}}
	// A plan of every lane: one partition ran case a, the other was left empty by selection.
	planned := [][]string{{"a"}}
	r0 := &results.Result{Schema: results.Schema, Suite: "s", PlanHash: "h", Planned: planned, Partition: results.Partition{Index: 0, Total: 1},
		Selection: sel, Deselected: left,
		Cases: []results.CaseResult{{ID: "a", Lane: "base", Requests: []results.RequestResult{{Index: 1, Of: 1, Checks: pass}}}}}
	merged, err := mergeJudged([]results.Input{{"r0", r0}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range merged {
		got = append(got, fmt.Sprintf("%s %s cases=%d deselected=%v selection=%v", l.Lane, l.Status, len(l.Cases), l.Deselected, l.Selection != nil))
	}
	want := []string{
		"base pass cases=1 deselected=[{b base r1}] selection=true",
		// Every case of extra was left out: a lane with nothing to check passes.
		"extra pass cases=0 deselected=[{e extra r2}] selection=true",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lanes (-want +got):\n%s", diff)
	}
}
