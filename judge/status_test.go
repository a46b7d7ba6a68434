package judge

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
)

func ck(name string, s checks.Status) checks.Check { return checks.Check{Name: name, Status: s} }

func req(s checks.Status, cs ...checks.Check) checks.RequestResult {
	return checks.RequestResult{Status: s, Checks: cs}
}

func TestRequestStatus(t *testing.T) {
	tests := []struct {
		name string
		cs   []checks.Check
		want checks.Status
	}{
		{"no checks", nil, checks.Error},
		{"empty slice", []checks.Check{}, checks.Error},
		{"one pass", []checks.Check{ck("a", checks.Pass)}, checks.Pass},
		{"all pass", []checks.Check{ck("a", checks.Pass), ck("b", checks.Pass)}, checks.Pass},
		{"one fail", []checks.Check{ck("a", checks.Fail)}, checks.Fail},
		{"one error", []checks.Check{ck("a", checks.Error)}, checks.Fail},
		{"fail then pass", []checks.Check{ck("a", checks.Fail), ck("b", checks.Pass)}, checks.Fail},
		{"pass then fail", []checks.Check{ck("a", checks.Pass), ck("b", checks.Fail)}, checks.Fail},
		{"skip after fail", []checks.Check{ck("a", checks.Fail), ck("b", checks.Skip)}, checks.Fail},
		{"fail after skip", []checks.Check{ck("a", checks.Skip), ck("b", checks.Fail)}, checks.Fail},
		{"error then pass", []checks.Check{ck("a", checks.Error), ck("b", checks.Pass)}, checks.Fail},
		{"pass then error", []checks.Check{ck("a", checks.Pass), ck("b", checks.Error)}, checks.Fail},
		{"known", []checks.Check{ck("a", checks.Known)}, checks.Known},
		{"known and pass", []checks.Check{ck("a", checks.Pass), ck("b", checks.Known)}, checks.Known},
		{"known then fail", []checks.Check{ck("a", checks.Known), ck("b", checks.Fail)}, checks.Fail},
		{"fail then known", []checks.Check{ck("a", checks.Fail), ck("b", checks.Known)}, checks.Fail},
		{"known and error", []checks.Check{ck("a", checks.Known), ck("b", checks.Error)}, checks.Fail},
		{"known and skip", []checks.Check{ck("a", checks.Skip), ck("b", checks.Known)}, checks.Known},
		{"pass and skip", []checks.Check{ck("a", checks.Pass), ck("b", checks.Skip)}, checks.Pass},
		{"skip and pass", []checks.Check{ck("a", checks.Skip), ck("b", checks.Pass)}, checks.Pass},
		{"one skip", []checks.Check{ck("a", checks.Skip)}, checks.Skip},
		{"all skip", []checks.Check{ck("a", checks.Skip), ck("b", checks.Skip)}, checks.Skip},
		{"cancelled check", []checks.Check{ck("a", checks.Pass), ck("b", checks.Cancelled)}, checks.Cancelled},
		{"cancelled and known", []checks.Check{ck("a", checks.Known), ck("b", checks.Cancelled)}, checks.Cancelled},
		{"cancelled and fail", []checks.Check{ck("a", checks.Cancelled), ck("b", checks.Fail)}, checks.Fail},
		{"flaky", []checks.Check{ck("a", checks.Pass), ck("perf.e2e", checks.Flaky)}, checks.Flaky},
		{"flaky never hides a fail", []checks.Check{ck("perf.e2e", checks.Flaky), ck("output.valid", checks.Fail)}, checks.Fail},
		{"flaky never hides an error", []checks.Check{ck("perf.e2e", checks.Flaky), ck("perf.record", checks.Error)}, checks.Fail},
		{"flaky over known", []checks.Check{ck("perf.e2e", checks.Known), ck("perf.stage.X", checks.Flaky)}, checks.Flaky},
		{"cancelled over flaky", []checks.Check{ck("perf.e2e", checks.Flaky), ck("b", checks.Cancelled)}, checks.Cancelled},
		{"flaky and skip", []checks.Check{ck("a", checks.Skip), ck("perf.e2e", checks.Flaky)}, checks.Flaky},
		{"empty status", []checks.Check{ck("a", checks.Pass), ck("b", "")}, checks.Fail},
		{"unknown status", []checks.Check{ck("a", "PASS")}, checks.Fail},
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
	pass := req(checks.Pass, ck("server.alive", checks.Pass))
	fail := req(checks.Pass, ck("server.alive", checks.Fail)) // stored status stale on purpose
	errd := req(checks.Error, ck("output.valid", checks.Error))
	known := req(checks.Known, ck("perf.e2e", checks.Known))
	skip := req(checks.Skip, ck("server.alive", checks.Skip))
	none := req(checks.Pass) // no checks: error, whatever it says
	cancelled := req(checks.Cancelled)
	cancelledWithFail := req(checks.Cancelled, ck("server.alive", checks.Fail))
	stalePass := req(checks.Fail, ck("server.alive", checks.Pass))
	flaky := req(checks.Fail, ck("perf.e2e", checks.Flaky)) // stored status stale on purpose

	tests := []struct {
		name string
		c    checks.CaseResult
		want checks.Status
	}{
		{"no requests", checks.CaseResult{}, checks.Error},
		{"no requests, passing case check", checks.CaseResult{Checks: []checks.Check{ck(checks.ServerAlive, checks.Pass)}}, checks.Error},
		{"startup failure", checks.CaseResult{Checks: []checks.Check{ck(checks.ServerAlive, checks.Fail)}}, checks.Fail},
		{"startup error", checks.CaseResult{Checks: []checks.Check{ck(checks.ServerAlive, checks.Error)}}, checks.Fail},
		{"cancelled before first request", checks.CaseResult{Status: checks.Cancelled}, checks.Cancelled},
		{"cancelled before first request, errors", checks.CaseResult{Status: checks.Cancelled, Errors: []string{"x"}}, checks.Error},
		{"cancelled before first request, startup failed", checks.CaseResult{Status: checks.Cancelled, Checks: []checks.Check{ck(checks.ServerAlive,
			checks.Fail)}}, checks.Fail},
		{"stored fail without requests is still error", checks.CaseResult{Status: checks.Fail}, checks.Error},
		{"one pass", checks.CaseResult{Requests: []checks.RequestResult{pass}}, checks.Pass},
		{"all pass", checks.CaseResult{Requests: []checks.RequestResult{pass, pass, pass}}, checks.Pass},
		{"stored fail recomputed as pass", checks.CaseResult{Status: checks.Fail, Requests: []checks.RequestResult{stalePass}}, checks.Pass},
		{"fail then pass", checks.CaseResult{Requests: []checks.RequestResult{fail, pass}}, checks.Fail},
		{"pass then fail", checks.CaseResult{Requests: []checks.RequestResult{pass, fail}}, checks.Fail},
		{"stale request status ignored", checks.CaseResult{Requests: []checks.RequestResult{fail}}, checks.Fail},
		{"error request", checks.CaseResult{Requests: []checks.RequestResult{pass, errd}}, checks.Fail},
		{"request without checks", checks.CaseResult{Requests: []checks.RequestResult{pass, none}}, checks.Fail},
		{"skipped request", checks.CaseResult{Requests: []checks.RequestResult{pass, skip}}, checks.Fail},
		{"skip after fail", checks.CaseResult{Requests: []checks.RequestResult{fail, skip}}, checks.Fail},
		{"known", checks.CaseResult{Requests: []checks.RequestResult{pass, known}}, checks.Known},
		{"known then fail", checks.CaseResult{Requests: []checks.RequestResult{known, fail}}, checks.Fail},
		{"fail then known", checks.CaseResult{Requests: []checks.RequestResult{fail, known}}, checks.Fail},
		{"cancelled", checks.CaseResult{Requests: []checks.RequestResult{pass, cancelled}}, checks.Cancelled},
		{"cancelled keeps cancelled despite checks", checks.CaseResult{Requests: []checks.RequestResult{cancelledWithFail}}, checks.Cancelled},
		{"cancelled and known", checks.CaseResult{Requests: []checks.RequestResult{known, cancelled}}, checks.Cancelled},
		{"fail then cancelled", checks.CaseResult{Requests: []checks.RequestResult{fail, cancelled}}, checks.Fail},
		{"cancelled then fail", checks.CaseResult{Requests: []checks.RequestResult{cancelled, fail}}, checks.Fail},
		{"cancelled then skipped", checks.CaseResult{Requests: []checks.RequestResult{cancelled, skip}}, checks.Fail},
		{"case check fails, requests pass", checks.CaseResult{Checks: []checks.Check{ck(checks.ServerAlive, checks.Fail)},
			Requests: []checks.RequestResult{pass, pass}}, checks.Fail},
		{"case check errors, requests pass", checks.CaseResult{Checks: []checks.Check{ck("memory.load_peak", checks.Error)},
			Requests: []checks.RequestResult{pass}}, checks.Fail},
		{"case check known", checks.CaseResult{Checks: []checks.Check{ck("perf.load", checks.Known)}, Requests: []checks.RequestResult{pass}}, checks.Known},
		{"case check skipped", checks.CaseResult{Checks: []checks.Check{ck("perf.load", checks.Skip)}, Requests: []checks.RequestResult{pass}}, checks.Pass},
		{"case check cancelled", checks.CaseResult{Checks: []checks.Check{ck("perf.load", checks.Cancelled)}, Requests: []checks.RequestResult{pass}},
			checks.Cancelled},
		{"case check unknown status", checks.CaseResult{Checks: []checks.Check{ck("perf.load", "ok")}, Requests: []checks.RequestResult{pass}}, checks.Fail},
		{"case errors, requests pass", checks.CaseResult{Errors: []string{"artifact: disk full"}, Requests: []checks.RequestResult{pass}}, checks.Error},
		{"case errors and failure", checks.CaseResult{Errors: []string{"x"}, Requests: []checks.RequestResult{fail}}, checks.Fail},
		{"case errors and cancelled", checks.CaseResult{Errors: []string{"x"}, Requests: []checks.RequestResult{cancelled}}, checks.Error},
		{"flaky", checks.CaseResult{Requests: []checks.RequestResult{pass, flaky}}, checks.Flaky},
		{"flaky and fail", checks.CaseResult{Requests: []checks.RequestResult{flaky, fail}}, checks.Fail},
		{"flaky and errored request", checks.CaseResult{Requests: []checks.RequestResult{flaky, errd}}, checks.Fail},
		{"flaky and skipped request", checks.CaseResult{Requests: []checks.RequestResult{flaky, skip}}, checks.Fail},
		{"flaky and known", checks.CaseResult{Requests: []checks.RequestResult{known, flaky}}, checks.Flaky},
		{"flaky and cancelled", checks.CaseResult{Requests: []checks.RequestResult{flaky, cancelled}}, checks.Cancelled},
		{"flaky and case errors", checks.CaseResult{Errors: []string{"x"}, Requests: []checks.RequestResult{flaky}}, checks.Error},
		{"case check flaky", checks.CaseResult{Checks: []checks.Check{ck("perf.load", checks.Flaky)}, Requests: []checks.RequestResult{pass}}, checks.Flaky},
		{"unknown request status is recomputed", checks.CaseResult{Requests: []checks.RequestResult{req("weird", ck("a", checks.Pass))}}, checks.Pass},
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
	pass := checks.CaseResult{ID: "p", Requests: []checks.RequestResult{req(checks.Pass, ck("a", checks.Pass))}}
	fail := checks.CaseResult{ID: "f", Requests: []checks.RequestResult{req(checks.Pass, ck("a", checks.Fail))}}
	errd := checks.CaseResult{ID: "e"} // no requests
	known := checks.CaseResult{ID: "k", Requests: []checks.RequestResult{req(checks.Known, ck("a", checks.Known))}}
	cancelled := checks.CaseResult{ID: "c", Requests: []checks.RequestResult{req(checks.Cancelled)}}
	staleFail := checks.CaseResult{ID: "s", Status: checks.Fail, Requests: []checks.RequestResult{req(checks.Fail, ck("a", checks.Pass))}}
	flaky := checks.CaseResult{ID: "y", Requests: []checks.RequestResult{req(checks.Pass, ck("perf.e2e", checks.Flaky))}}

	tests := []struct {
		name  string
		cases []checks.CaseResult
		errs  []string
		want  checks.Status
	}{
		{"empty", nil, nil, checks.Error},
		{"empty with errors", nil, []string{"suite: no cases"}, checks.Error},
		{"one pass", []checks.CaseResult{pass}, nil, checks.Pass},
		{"all pass", []checks.CaseResult{pass, pass}, nil, checks.Pass},
		{"stale case status recomputed", []checks.CaseResult{staleFail}, nil, checks.Pass},
		{"fail then pass", []checks.CaseResult{fail, pass}, nil, checks.Fail},
		{"pass then fail", []checks.CaseResult{pass, fail}, nil, checks.Fail},
		{"run errors", []checks.CaseResult{pass}, []string{"gpu: unavailable"}, checks.Error},
		{"run errors and fail", []checks.CaseResult{fail}, []string{"x"}, checks.Fail},
		{"case error", []checks.CaseResult{pass, errd}, nil, checks.Error},
		{"case error and fail", []checks.CaseResult{errd, fail}, nil, checks.Fail},
		{"cancelled", []checks.CaseResult{pass, cancelled}, nil, checks.Cancelled},
		{"cancelled and error", []checks.CaseResult{cancelled, errd}, nil, checks.Error},
		{"cancelled and fail", []checks.CaseResult{cancelled, fail}, nil, checks.Fail},
		{"known", []checks.CaseResult{pass, known}, nil, checks.Known},
		{"known and cancelled", []checks.CaseResult{known, cancelled}, nil, checks.Cancelled},
		{"known and fail", []checks.CaseResult{known, fail}, nil, checks.Fail},
		{"flaky", []checks.CaseResult{pass, flaky}, nil, checks.Flaky},
		{"flaky and known", []checks.CaseResult{known, flaky}, nil, checks.Flaky},
		{"flaky and fail", []checks.CaseResult{flaky, fail}, nil, checks.Fail},
		{"flaky and case error", []checks.CaseResult{flaky, errd}, nil, checks.Error},
		{"flaky and run errors", []checks.CaseResult{flaky}, []string{"x"}, checks.Error},
		{"flaky and cancelled", []checks.CaseResult{flaky, cancelled}, nil, checks.Cancelled},
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
	r := &checks.Result{
		Status: checks.Pass,
		Cases: []checks.CaseResult{
			{
				ID:     "t2i",
				Status: checks.Pass,
				Requests: []checks.RequestResult{
					{Index: 1, Of: 3, Status: checks.Fail, Checks: []checks.Check{ck(checks.ServerAlive, checks.Pass), ck(checks.OutputValid, checks.Pass)}},
					{Index: 2, Of: 3, Status: checks.Pass, Checks: []checks.Check{ck(checks.ServerAlive, checks.Pass), ck(checks.OutputValid, checks.Fail)}},
					{Index: 3, Of: 3, Status: checks.Pass, Checks: []checks.Check{ck(checks.ServerAlive, checks.Skip)}},
				},
			},
			{
				ID:     "t2v",
				Status: checks.Fail,
				Requests: []checks.RequestResult{
					{Index: 1, Of: 2, Status: checks.Pass, Checks: []checks.Check{ck(checks.ServerAlive, checks.Pass), ck("perf.e2e", checks.Known)}},
					{Index: 2, Of: 2, Status: checks.Cancelled, Checks: []checks.Check{ck(checks.ServerAlive, checks.Error)}},
				},
			},
			{ID: "down", Status: checks.Pass, Checks: []checks.Check{ck(checks.ServerAlive, checks.Fail)}},
		},
	}
	Finalize(r)
	type got struct {
		Run      checks.Status
		Cases    []checks.Status
		Requests [][]checks.Status
	}
	g := got{Run: r.Status}
	for _, c := range r.Cases {
		g.Cases = append(g.Cases, c.Status)
		var rs []checks.Status
		for _, rr := range c.Requests {
			rs = append(rs, rr.Status)
		}
		g.Requests = append(g.Requests, rs)
	}
	want := got{
		Run:      checks.Fail,
		Cases:    []checks.Status{checks.Fail, checks.Cancelled, checks.Fail},
		Requests: [][]checks.Status{{checks.Pass, checks.Fail, checks.Skip}, {checks.Known, checks.Cancelled}, nil},
	}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("Finalize (-want +got):\n%s", diff)
	}
}

func TestNothingSelectedPasses(t *testing.T) {
	left := []checks.Deselected{{Case: "a", Reason: "r"}}
	for _, tc := range []struct {
		name string
		r    checks.Result
		want checks.Status
	}{
		{"every case left out", checks.Result{Planned: [][]string{{}}, Deselected: left}, checks.Pass},
		{"merged lane, every case left out", checks.Result{Deselected: left}, checks.Pass},
		{"left out, but an error", checks.Result{Deselected: left, Errors: []string{"boom"}}, checks.Error},
		{"nothing left out and nothing run", checks.Result{}, checks.Error},
		{"a planned case did not run", checks.Result{Planned: [][]string{{}, {"b"}}, Partition: checks.Partition{Index: 1, Total: 2}, Deselected: left},
			checks.Error},
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
