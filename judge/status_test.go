package judge

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/results"
)

func ck(name string, s results.Status) results.Check { return results.Check{Name: name, Status: s} }

func req(s results.Status, cs ...results.Check) results.RequestResult {
	return results.RequestResult{Status: s, Checks: cs}
}

func TestRequestStatus(t *testing.T) {
	tests := []struct {
		name string
		cs   []results.Check
		want results.Status
	}{
		{"no checks", nil, results.Error},
		{"empty slice", []results.Check{}, results.Error},
		{"one pass", []results.Check{ck("a", results.Pass)}, results.Pass},
		{"all pass", []results.Check{ck("a", results.Pass), ck("b", results.Pass)}, results.Pass},
		{"one fail", []results.Check{ck("a", results.Fail)}, results.Fail},
		{"one error", []results.Check{ck("a", results.Error)}, results.Fail},
		{"fail then pass", []results.Check{ck("a", results.Fail), ck("b", results.Pass)}, results.Fail},
		{"pass then fail", []results.Check{ck("a", results.Pass), ck("b", results.Fail)}, results.Fail},
		{"skip after fail", []results.Check{ck("a", results.Fail), ck("b", results.Skip)}, results.Fail},
		{"fail after skip", []results.Check{ck("a", results.Skip), ck("b", results.Fail)}, results.Fail},
		{"error then pass", []results.Check{ck("a", results.Error), ck("b", results.Pass)}, results.Fail},
		{"pass then error", []results.Check{ck("a", results.Pass), ck("b", results.Error)}, results.Fail},
		{"known", []results.Check{ck("a", results.Known)}, results.Known},
		{"known and pass", []results.Check{ck("a", results.Pass), ck("b", results.Known)}, results.Known},
		{"known then fail", []results.Check{ck("a", results.Known), ck("b", results.Fail)}, results.Fail},
		{"fail then known", []results.Check{ck("a", results.Fail), ck("b", results.Known)}, results.Fail},
		{"known and error", []results.Check{ck("a", results.Known), ck("b", results.Error)}, results.Fail},
		{"known and skip", []results.Check{ck("a", results.Skip), ck("b", results.Known)}, results.Known},
		{"pass and skip", []results.Check{ck("a", results.Pass), ck("b", results.Skip)}, results.Pass},
		{"skip and pass", []results.Check{ck("a", results.Skip), ck("b", results.Pass)}, results.Pass},
		{"one skip", []results.Check{ck("a", results.Skip)}, results.Skip},
		{"all skip", []results.Check{ck("a", results.Skip), ck("b", results.Skip)}, results.Skip},
		{"cancelled check", []results.Check{ck("a", results.Pass), ck("b", results.Cancelled)}, results.Cancelled},
		{"cancelled and known", []results.Check{ck("a", results.Known), ck("b", results.Cancelled)}, results.Cancelled},
		{"cancelled and fail", []results.Check{ck("a", results.Cancelled), ck("b", results.Fail)}, results.Fail},
		{"flaky", []results.Check{ck("a", results.Pass), ck("perf.e2e", results.Flaky)}, results.Flaky},
		{"flaky never hides a fail", []results.Check{ck("perf.e2e", results.Flaky), ck("output.valid", results.Fail)}, results.Fail},
		{"flaky never hides an error", []results.Check{ck("perf.e2e", results.Flaky), ck("perf.record", results.Error)}, results.Fail},
		{"flaky over known", []results.Check{ck("perf.e2e", results.Known), ck("perf.stage.X", results.Flaky)}, results.Flaky},
		{"cancelled over flaky", []results.Check{ck("perf.e2e", results.Flaky), ck("b", results.Cancelled)}, results.Cancelled},
		{"flaky and skip", []results.Check{ck("a", results.Skip), ck("perf.e2e", results.Flaky)}, results.Flaky},
		{"empty status", []results.Check{ck("a", results.Pass), ck("b", "")}, results.Fail},
		{"unknown status", []results.Check{ck("a", "PASS")}, results.Fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, RequestStatus(tt.cs)); diff != "" {
				t.Errorf("RequestStatus(%v) (-want +got):\n%s", tt.cs, diff)
			}
		})
	}
}

func TestCaseStatus(t *testing.T) {
	pass := req(results.Pass, ck("server.alive", results.Pass))
	fail := req(results.Pass, ck("server.alive", results.Fail)) // stored status stale on purpose
	errd := req(results.Error, ck("output.valid", results.Error))
	known := req(results.Known, ck("perf.e2e", results.Known))
	skip := req(results.Skip, ck("server.alive", results.Skip))
	none := req(results.Pass) // no checks: error, whatever it says
	cancelled := req(results.Cancelled)
	cancelledWithFail := req(results.Cancelled, ck("server.alive", results.Fail))
	stalePass := req(results.Fail, ck("server.alive", results.Pass))
	flaky := req(results.Fail, ck("perf.e2e", results.Flaky)) // stored status stale on purpose

	tests := []struct {
		name string
		c    results.CaseResult
		want results.Status
	}{
		{"no requests", results.CaseResult{}, results.Error},
		{"no requests, passing case check", results.CaseResult{Checks: []results.Check{ck(results.ServerAlive, results.Pass)}}, results.Error},
		{"startup failure", results.CaseResult{Checks: []results.Check{ck(results.ServerAlive, results.Fail)}}, results.Fail},
		{"startup error", results.CaseResult{Checks: []results.Check{ck(results.ServerAlive, results.Error)}}, results.Fail},
		{"cancelled before first request", results.CaseResult{Status: results.Cancelled}, results.Cancelled},
		{"cancelled before first request, errors", results.CaseResult{Status: results.Cancelled, Errors: []string{"x"}}, results.Error},
		{"cancelled before first request, startup failed", results.CaseResult{Status: results.Cancelled, Checks: []results.Check{ck(results.ServerAlive,
			results.Fail)}}, results.Fail},
		{"stored fail without requests is still error", results.CaseResult{Status: results.Fail}, results.Error},
		{"one pass", results.CaseResult{Requests: []results.RequestResult{pass}}, results.Pass},
		{"all pass", results.CaseResult{Requests: []results.RequestResult{pass, pass, pass}}, results.Pass},
		{"stored fail recomputed as pass", results.CaseResult{Status: results.Fail, Requests: []results.RequestResult{stalePass}}, results.Pass},
		{"fail then pass", results.CaseResult{Requests: []results.RequestResult{fail, pass}}, results.Fail},
		{"pass then fail", results.CaseResult{Requests: []results.RequestResult{pass, fail}}, results.Fail},
		{"stale request status ignored", results.CaseResult{Requests: []results.RequestResult{fail}}, results.Fail},
		{"error request", results.CaseResult{Requests: []results.RequestResult{pass, errd}}, results.Fail},
		{"request without checks", results.CaseResult{Requests: []results.RequestResult{pass, none}}, results.Fail},
		{"skipped request", results.CaseResult{Requests: []results.RequestResult{pass, skip}}, results.Fail},
		{"skip after fail", results.CaseResult{Requests: []results.RequestResult{fail, skip}}, results.Fail},
		{"known", results.CaseResult{Requests: []results.RequestResult{pass, known}}, results.Known},
		{"known then fail", results.CaseResult{Requests: []results.RequestResult{known, fail}}, results.Fail},
		{"fail then known", results.CaseResult{Requests: []results.RequestResult{fail, known}}, results.Fail},
		{"cancelled", results.CaseResult{Requests: []results.RequestResult{pass, cancelled}}, results.Cancelled},
		{"cancelled keeps cancelled despite checks", results.CaseResult{Requests: []results.RequestResult{cancelledWithFail}}, results.Cancelled},
		{"cancelled and known", results.CaseResult{Requests: []results.RequestResult{known, cancelled}}, results.Cancelled},
		{"fail then cancelled", results.CaseResult{Requests: []results.RequestResult{fail, cancelled}}, results.Fail},
		{"cancelled then fail", results.CaseResult{Requests: []results.RequestResult{cancelled, fail}}, results.Fail},
		{"cancelled then skipped", results.CaseResult{Requests: []results.RequestResult{cancelled, skip}}, results.Fail},
		{"case check fails, requests pass", results.CaseResult{Checks: []results.Check{ck(results.ServerAlive, results.Fail)},
			Requests: []results.RequestResult{pass, pass}}, results.Fail},
		{"case check errors, requests pass", results.CaseResult{Checks: []results.Check{ck("memory.load_peak", results.Error)},
			Requests: []results.RequestResult{pass}}, results.Fail},
		{"case check known", results.CaseResult{Checks: []results.Check{ck("perf.load", results.Known)}, Requests: []results.RequestResult{pass}},
			results.Known},
		{"case check skipped", results.CaseResult{Checks: []results.Check{ck("perf.load", results.Skip)}, Requests: []results.RequestResult{pass}},
			results.Pass},
		{"case check cancelled", results.CaseResult{Checks: []results.Check{ck("perf.load", results.Cancelled)}, Requests: []results.RequestResult{pass}},
			results.Cancelled},
		{"case check unknown status", results.CaseResult{Checks: []results.Check{ck("perf.load", "ok")}, Requests: []results.RequestResult{pass}},
			results.Fail},
		{"case errors, requests pass", results.CaseResult{Errors: []string{"artifact: disk full"}, Requests: []results.RequestResult{pass}}, results.Error},
		{"case errors and failure", results.CaseResult{Errors: []string{"x"}, Requests: []results.RequestResult{fail}}, results.Fail},
		{"case errors and cancelled", results.CaseResult{Errors: []string{"x"}, Requests: []results.RequestResult{cancelled}}, results.Error},
		{"flaky", results.CaseResult{Requests: []results.RequestResult{pass, flaky}}, results.Flaky},
		{"flaky and fail", results.CaseResult{Requests: []results.RequestResult{flaky, fail}}, results.Fail},
		{"flaky and errored request", results.CaseResult{Requests: []results.RequestResult{flaky, errd}}, results.Fail},
		{"flaky and skipped request", results.CaseResult{Requests: []results.RequestResult{flaky, skip}}, results.Fail},
		{"flaky and known", results.CaseResult{Requests: []results.RequestResult{known, flaky}}, results.Flaky},
		{"flaky and cancelled", results.CaseResult{Requests: []results.RequestResult{flaky, cancelled}}, results.Cancelled},
		{"flaky and case errors", results.CaseResult{Errors: []string{"x"}, Requests: []results.RequestResult{flaky}}, results.Error},
		{"case check flaky", results.CaseResult{Checks: []results.Check{ck("perf.load", results.Flaky)}, Requests: []results.RequestResult{pass}},
			results.Flaky},
		{"unknown request status is recomputed", results.CaseResult{Requests: []results.RequestResult{req("weird", ck("a", results.Pass))}}, results.Pass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, CaseStatus(tt.c)); diff != "" {
				t.Errorf("CaseStatus (-want +got):\n%s", diff)
			}
			// Order independence: reversing the requests and case checks never changes it.
			rev := tt.c
			rev.Requests = reversed(tt.c.Requests)
			rev.Checks = reversed(tt.c.Checks)
			if diff := cmp.Diff(tt.want, CaseStatus(rev)); diff != "" {
				t.Errorf("CaseStatus, reversed (-want +got):\n%s", diff)
			}
		})
	}
}

func reversed[T any](s []T) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

func TestRunStatus(t *testing.T) {
	pass := results.CaseResult{ID: "p", Requests: []results.RequestResult{req(results.Pass, ck("a", results.Pass))}}
	fail := results.CaseResult{ID: "f", Requests: []results.RequestResult{req(results.Pass, ck("a", results.Fail))}}
	errd := results.CaseResult{ID: "e"} // no requests
	known := results.CaseResult{ID: "k", Requests: []results.RequestResult{req(results.Known, ck("a", results.Known))}}
	cancelled := results.CaseResult{ID: "c", Requests: []results.RequestResult{req(results.Cancelled)}}
	staleFail := results.CaseResult{ID: "s", Status: results.Fail, Requests: []results.RequestResult{req(results.Fail, ck("a", results.Pass))}}
	flaky := results.CaseResult{ID: "y", Requests: []results.RequestResult{req(results.Pass, ck("perf.e2e", results.Flaky))}}

	tests := []struct {
		name  string
		cases []results.CaseResult
		errs  []string
		want  results.Status
	}{
		{"empty", nil, nil, results.Error},
		{"empty with errors", nil, []string{"suite: no cases"}, results.Error},
		{"one pass", []results.CaseResult{pass}, nil, results.Pass},
		{"all pass", []results.CaseResult{pass, pass}, nil, results.Pass},
		{"stale case status recomputed", []results.CaseResult{staleFail}, nil, results.Pass},
		{"fail then pass", []results.CaseResult{fail, pass}, nil, results.Fail},
		{"pass then fail", []results.CaseResult{pass, fail}, nil, results.Fail},
		{"run errors", []results.CaseResult{pass}, []string{"gpu: unavailable"}, results.Error},
		{"run errors and fail", []results.CaseResult{fail}, []string{"x"}, results.Fail},
		{"case error", []results.CaseResult{pass, errd}, nil, results.Error},
		{"case error and fail", []results.CaseResult{errd, fail}, nil, results.Fail},
		{"cancelled", []results.CaseResult{pass, cancelled}, nil, results.Cancelled},
		{"cancelled and error", []results.CaseResult{cancelled, errd}, nil, results.Error},
		{"cancelled and fail", []results.CaseResult{cancelled, fail}, nil, results.Fail},
		{"known", []results.CaseResult{pass, known}, nil, results.Known},
		{"known and cancelled", []results.CaseResult{known, cancelled}, nil, results.Cancelled},
		{"known and fail", []results.CaseResult{known, fail}, nil, results.Fail},
		{"flaky", []results.CaseResult{pass, flaky}, nil, results.Flaky},
		{"flaky and known", []results.CaseResult{known, flaky}, nil, results.Flaky},
		{"flaky and fail", []results.CaseResult{flaky, fail}, nil, results.Fail},
		{"flaky and case error", []results.CaseResult{flaky, errd}, nil, results.Error},
		{"flaky and run errors", []results.CaseResult{flaky}, []string{"x"}, results.Error},
		{"flaky and cancelled", []results.CaseResult{flaky, cancelled}, nil, results.Cancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, RunStatus(tt.cases, tt.errs)); diff != "" {
				t.Errorf("RunStatus (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, RunStatus(reversed(tt.cases), tt.errs)); diff != "" {
				t.Errorf("RunStatus, reversed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFinalize(t *testing.T) {
	r := &results.Result{
		Status: results.Pass,
		Cases: []results.CaseResult{
			{
				ID:     "t2i",
				Status: results.Pass,
				Requests: []results.RequestResult{
					{Index: 1, Of: 3, Status: results.Fail, Checks: []results.Check{ck(results.ServerAlive, results.Pass), ck(results.OutputValid,
						results.Pass)}},
					{Index: 2, Of: 3, Status: results.Pass, Checks: []results.Check{ck(results.ServerAlive, results.Pass), ck(results.OutputValid,
						results.Fail)}},
					{Index: 3, Of: 3, Status: results.Pass, Checks: []results.Check{ck(results.ServerAlive, results.Skip)}},
				},
			},
			{
				ID:     "t2v",
				Status: results.Fail,
				Requests: []results.RequestResult{
					{Index: 1, Of: 2, Status: results.Pass, Checks: []results.Check{ck(results.ServerAlive, results.Pass), ck("perf.e2e", results.Known)}},
					{Index: 2, Of: 2, Status: results.Cancelled, Checks: []results.Check{ck(results.ServerAlive, results.Error)}},
				},
			},
			{ID: "down", Status: results.Pass, Checks: []results.Check{ck(results.ServerAlive, results.Fail)}},
		},
	}
	Finalize(r)
	type got struct {
		Run      results.Status
		Cases    []results.Status
		Requests [][]results.Status
	}
	g := got{Run: r.Status}
	for _, c := range r.Cases {
		g.Cases = append(g.Cases, c.Status)
		var rs []results.Status
		for _, rr := range c.Requests {
			rs = append(rs, rr.Status)
		}
		g.Requests = append(g.Requests, rs)
	}
	want := got{
		Run:      results.Fail,
		Cases:    []results.Status{results.Fail, results.Cancelled, results.Fail},
		Requests: [][]results.Status{{results.Pass, results.Fail, results.Skip}, {results.Known, results.Cancelled}, nil},
	}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("Finalize (-want +got):\n%s", diff)
	}
}

func TestNothingSelectedPasses(t *testing.T) {
	left := []results.Deselected{{Case: "a", Reason: "r"}}
	for _, tc := range []struct {
		name string
		r    results.Result
		want results.Status
	}{
		{"every case left out", results.Result{Planned: [][]string{{}}, Deselected: left}, results.Pass},
		{"merged lane, every case left out", results.Result{Deselected: left}, results.Pass},
		{"left out, but an error", results.Result{Deselected: left, Errors: []string{"boom"}}, results.Error},
		{"nothing left out and nothing run", results.Result{}, results.Error},
		{"a planned case did not run", results.Result{Planned: [][]string{{}, {"b"}}, Partition: results.Partition{Index: 1, Total: 2}, Deselected: left},
			results.Error},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			Finalize(&r)
			if r.Status != tc.want {
				t.Errorf("status %s, want %s", r.Status, tc.want)
			}
		})
	}
}

// TestSettle: a record rebuilt from requests.jsonl, whose request lines carry the statuses
// the run judged and whose cases and run have none, gets its case and run statuses, and its
// request statuses are left as the lines say.
func TestSettle(t *testing.T) {
	r := &results.Result{Incomplete: "rebuilt", Errors: []string{"results.json is missing"}, Cases: []results.CaseResult{{ID: "c",
		Requests: []results.RequestResult{
			{Index: 1, Of: 2, Status: results.Pass, Checks: []results.Check{ck(results.OutputPresent, results.Pass)}},
			{Index: 2, Of: 2, Status: results.Cancelled, Checks: []results.Check{ck(results.ServerAlive, results.Cancelled)}},
		}}}}
	Settle(r)
	if r.Cases[0].Status != results.Cancelled || r.Status != results.Error {
		t.Errorf("case %s, run %s; want cancelled, and error (the run's own error)", r.Cases[0].Status, r.Status)
	}
	if r.Cases[0].Requests[0].Status != results.Pass || r.Cases[0].Requests[1].Status != results.Cancelled {
		t.Errorf("request statuses changed: %s, %s", r.Cases[0].Requests[0].Status, r.Cases[0].Requests[1].Status)
	}
}
