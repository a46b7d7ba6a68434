package baselines

import (
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/google/go-cmp/cmp"
)

func measuredRequest(i, of int, st checks.Status) checks.RequestResult {
	return checks.RequestResult{Index: i, Of: of, Status: st, ServerTotalMs: 100, Checks: []checks.Check{{Name: checks.OutputPresent, Status: st}}}
}

// TestUnfit: a case unfit for a baseline is named with why, from its judged status (the
// results are judged when read) and its requests.
func TestUnfit(t *testing.T) {
	part := func(cases ...checks.CaseResult) *checks.Result {
		return &checks.Result{Lane: "base", Partition: checks.Partition{Index: 0, Total: 1}, Cases: cases}
	}
	pass := checks.CaseResult{ID: "ok", Status: checks.Pass, Requests: []checks.RequestResult{measuredRequest(1, 2, checks.Pass), measuredRequest(2, 2,
		checks.Pass)}}
	hung := checks.CaseResult{ID: "hung", Status: checks.Fail, Requests: []checks.RequestResult{
		measuredRequest(1, 3, checks.Pass),
		{
			Index:  2,
			Of:     3,
			Status: checks.Fail,
			Checks: []checks.Check{{Name: checks.ServerAlive, Status: checks.Pass}, {Name: checks.OutputPresent, Status: checks.Fail}},
		},
		{Index: 3, Of: 3, Status: checks.Skip, Checks: []checks.Check{{Name: checks.ServerAlive, Status: checks.Skip}}},
	}}
	short := checks.CaseResult{ID: "short", Status: checks.Pass, Requests: []checks.RequestResult{measuredRequest(1, 3, checks.Pass)}}
	noPerf := checks.CaseResult{
		ID:     "noperf",
		Status: checks.Pass,
		Requests: []checks.RequestResult{
			measuredRequest(1, 2, checks.Pass),
			{Index: 2, Of: 2, Status: checks.Pass, Checks: []checks.Check{{Name: checks.OutputPresent, Status: checks.Pass}}},
		},
	}
	for _, tc := range []struct {
		name    string
		results []*checks.Result
		want    []string
	}{
		{"all passed and measured", []*checks.Result{part(pass)}, nil},
		{"a hung request", []*checks.Result{part(pass, hung)}, []string{`lane "base" partition 0/1 case hung: fail (request 2/3 fail: output.present fail)`}},
		{"fewer requests than asked", []*checks.Result{part(short)}, []string{`lane "base" partition 0/1 case short: incomplete: 1 of 3 requests recorded`}},
		{"a request without perf record", []*checks.Result{part(noPerf)},
			[]string{`lane "base" partition 0/1 case noperf: incomplete: request(s) [2] of 2 have no perf record`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Unfit(tc.results)); diff != "" {
				t.Errorf("Unfit (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSources(t *testing.T) {
	a := checks.CaseResult{ID: "a", Requests: []checks.RequestResult{measuredRequest(1, 3, checks.Pass), measuredRequest(2, 3, checks.Pass), {Index: 3, Of: 3}}}
	b := checks.CaseResult{ID: "b", Requests: []checks.RequestResult{measuredRequest(1, 1, checks.Pass)}}
	got := Sources([]*checks.Result{{Cases: []checks.CaseResult{a, b}}, {Cases: []checks.CaseResult{a}}})
	want := map[string]Source{"a": {Requests: 4, Partitions: 2}, "b": {Requests: 1, Partitions: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sources (-want +got):\n%s", diff)
	}
	if got, want := got["b"].String(), "1 request × 1 partition"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
