package checks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPlanProblems(t *testing.T) {
	planned := [][]string{{"a", "b"}, {"c"}, {"d"}}
	part := func(i int, cases ...string) *Result {
		r := &Result{PlanHash: "h1", Planned: planned, Partition: Partition{Index: i, Total: 3}}
		for _, c := range cases {
			r.Cases = append(r.Cases, CaseResult{ID: c})
		}
		return r
	}
	for _, tc := range []struct {
		name   string
		inputs []Input
		want   []string
	}{
		{"complete", []Input{{"p0", part(0, "a", "b")}, {"p1", part(1, "c")}, {"p2", part(2, "d")}}, nil},
		{"missing partition", []Input{{"p0", part(0, "a", "b")}, {"p2", part(2, "d")}},
			[]string{"partition 1/3 of plan h1 never reported: its cases c did not run"}},
		{"missing case", []Input{{"p0", part(0, "a")}, {"p1", part(1, "c")}, {"p2", part(2, "d")}},
			[]string{"p0: planned case b of partition 0/3 has no result"}},
		{"case outside its partition", []Input{{"p0", part(0, "a", "b")}, {"p1", part(1, "c", "d")}, {"p2", part(2, "d")}},
			[]string{"case d ran twice: p1 and p2", "p1: case d ran in partition 1/3, which the plan does not give it"}},
		{"partition twice", []Input{{"p0", part(0, "a", "b")}, {"p0b", part(0, "a", "b")}, {"p1", part(1, "c")}, {"p2", part(2, "d")}},
			[]string{"partition 0/3 reported twice: p0 and p0b"}},
		{"same file twice is one report", []Input{{"p0", part(0, "a", "b")}, {"p0", part(0, "a", "b")}, {"p1", part(1, "c")}, {"p2", part(2, "d")}}, nil},
		{"wrong total", []Input{{"p0", &Result{PlanHash: "h1", Planned: planned, Partition: Partition{Index: 0, Total: 2}}}, {"p1", part(1, "c")}, {"p2", part(2, "d")}},
			[]string{"p0: partition 0/2 does not fit plan h1 of 3 partitions", "partition 0/3 of plan h1 never reported: its cases a, b did not run"}},
		{"unplanned run is not checked", []Input{{"x", &Result{Cases: []CaseResult{{ID: "z"}}}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanProblems(tc.inputs)["h1"]
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeMissingPartitionIsALaneError(t *testing.T) {
	planned := [][]string{{"a"}, {"b"}}
	pass := []Check{{Name: ServerAlive, Status: Pass}}
	r0 := &Result{Schema: Schema, Suite: "s", Lane: "base", PlanHash: "h", Planned: planned, Partition: Partition{Index: 0, Total: 2},
		Cases: []CaseResult{{ID: "a", Requests: []RequestResult{{Index: 1, Of: 1, Checks: pass}}}}}
	got, err := Merge([]Input{{"results-0/results.json", r0}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Status != Error {
		t.Fatalf("merged status %v, want one lane with status error", got)
	}
	if want := []string{"partition 1/2 of plan h never reported: its cases b did not run"}; !cmp.Equal(want, got[0].Errors) {
		t.Errorf("errors %q, want %q", got[0].Errors, want)
	}
}
