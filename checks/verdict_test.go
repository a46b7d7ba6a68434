package checks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ck(name string, s Status) Check { return Check{Name: name, Status: s} }

func req(s Status, cs ...Check) RequestResult { return RequestResult{Status: s, Checks: cs} }

func TestRequestStatus(t *testing.T) {
	tests := []struct {
		name string
		cs   []Check
		want Status
	}{
		{"no checks", nil, Error},
		{"empty slice", []Check{}, Error},
		{"one pass", []Check{ck("a", Pass)}, Pass},
		{"all pass", []Check{ck("a", Pass), ck("b", Pass)}, Pass},
		{"one fail", []Check{ck("a", Fail)}, Fail},
		{"one error", []Check{ck("a", Error)}, Fail},
		{"fail then pass", []Check{ck("a", Fail), ck("b", Pass)}, Fail},
		{"pass then fail", []Check{ck("a", Pass), ck("b", Fail)}, Fail},
		{"skip after fail", []Check{ck("a", Fail), ck("b", Skip)}, Fail},
		{"fail after skip", []Check{ck("a", Skip), ck("b", Fail)}, Fail},
		{"error then pass", []Check{ck("a", Error), ck("b", Pass)}, Fail},
		{"pass then error", []Check{ck("a", Pass), ck("b", Error)}, Fail},
		{"known", []Check{ck("a", Known)}, Known},
		{"known and pass", []Check{ck("a", Pass), ck("b", Known)}, Known},
		{"known then fail", []Check{ck("a", Known), ck("b", Fail)}, Fail},
		{"fail then known", []Check{ck("a", Fail), ck("b", Known)}, Fail},
		{"known and error", []Check{ck("a", Known), ck("b", Error)}, Fail},
		{"known and skip", []Check{ck("a", Skip), ck("b", Known)}, Known},
		{"pass and skip", []Check{ck("a", Pass), ck("b", Skip)}, Pass},
		{"skip and pass", []Check{ck("a", Skip), ck("b", Pass)}, Pass},
		{"one skip", []Check{ck("a", Skip)}, Skip},
		{"all skip", []Check{ck("a", Skip), ck("b", Skip)}, Skip},
		{"cancelled check", []Check{ck("a", Pass), ck("b", Cancelled)}, Cancelled},
		{"cancelled and known", []Check{ck("a", Known), ck("b", Cancelled)}, Cancelled},
		{"cancelled and fail", []Check{ck("a", Cancelled), ck("b", Fail)}, Fail},
		{"flaky", []Check{ck("a", Pass), ck("perf.e2e", Flaky)}, Flaky},
		{"flaky never hides a fail", []Check{ck("perf.e2e", Flaky), ck("output.valid", Fail)}, Fail},
		{"flaky never hides an error", []Check{ck("perf.e2e", Flaky), ck("perf.record", Error)}, Fail},
		{"flaky over known", []Check{ck("perf.e2e", Known), ck("perf.stage.X", Flaky)}, Flaky},
		{"cancelled over flaky", []Check{ck("perf.e2e", Flaky), ck("b", Cancelled)}, Cancelled},
		{"flaky and skip", []Check{ck("a", Skip), ck("perf.e2e", Flaky)}, Flaky},
		{"empty status", []Check{ck("a", Pass), ck("b", "")}, Fail},
		{"unknown status", []Check{ck("a", "PASS")}, Fail},
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
	pass := req(Pass, ck("server.alive", Pass))
	fail := req(Pass, ck("server.alive", Fail)) // stored status stale on purpose
	errd := req(Error, ck("output.valid", Error))
	known := req(Known, ck("perf.e2e", Known))
	skip := req(Skip, ck("server.alive", Skip))
	none := req(Pass) // no checks: error, whatever it says
	cancelled := req(Cancelled)
	cancelledWithFail := req(Cancelled, ck("server.alive", Fail))
	stalePass := req(Fail, ck("server.alive", Pass))
	flaky := req(Fail, ck("perf.e2e", Flaky)) // stored status stale on purpose

	tests := []struct {
		name string
		c    CaseResult
		want Status
	}{
		{"no requests", CaseResult{}, Error},
		{"no requests, passing case check", CaseResult{Checks: []Check{ck(ServerAlive, Pass)}}, Error},
		{"startup failure", CaseResult{Checks: []Check{ck(ServerAlive, Fail)}}, Fail},
		{"startup error", CaseResult{Checks: []Check{ck(ServerAlive, Error)}}, Fail},
		{"cancelled before first request", CaseResult{Status: Cancelled}, Cancelled},
		{"cancelled before first request, errors", CaseResult{Status: Cancelled, Errors: []string{"x"}}, Error},
		{"cancelled before first request, startup failed", CaseResult{Status: Cancelled, Checks: []Check{ck(ServerAlive, Fail)}}, Fail},
		{"stored fail without requests is still error", CaseResult{Status: Fail}, Error},
		{"one pass", CaseResult{Requests: []RequestResult{pass}}, Pass},
		{"all pass", CaseResult{Requests: []RequestResult{pass, pass, pass}}, Pass},
		{"stored fail recomputed as pass", CaseResult{Status: Fail, Requests: []RequestResult{stalePass}}, Pass},
		{"fail then pass", CaseResult{Requests: []RequestResult{fail, pass}}, Fail},
		{"pass then fail", CaseResult{Requests: []RequestResult{pass, fail}}, Fail},
		{"stale request status ignored", CaseResult{Requests: []RequestResult{fail}}, Fail},
		{"error request", CaseResult{Requests: []RequestResult{pass, errd}}, Fail},
		{"request without checks", CaseResult{Requests: []RequestResult{pass, none}}, Fail},
		{"skipped request", CaseResult{Requests: []RequestResult{pass, skip}}, Fail},
		{"skip after fail", CaseResult{Requests: []RequestResult{fail, skip}}, Fail},
		{"known", CaseResult{Requests: []RequestResult{pass, known}}, Known},
		{"known then fail", CaseResult{Requests: []RequestResult{known, fail}}, Fail},
		{"fail then known", CaseResult{Requests: []RequestResult{fail, known}}, Fail},
		{"cancelled", CaseResult{Requests: []RequestResult{pass, cancelled}}, Cancelled},
		{"cancelled keeps cancelled despite checks", CaseResult{Requests: []RequestResult{cancelledWithFail}}, Cancelled},
		{"cancelled and known", CaseResult{Requests: []RequestResult{known, cancelled}}, Cancelled},
		{"fail then cancelled", CaseResult{Requests: []RequestResult{fail, cancelled}}, Fail},
		{"cancelled then fail", CaseResult{Requests: []RequestResult{cancelled, fail}}, Fail},
		{"cancelled then skipped", CaseResult{Requests: []RequestResult{cancelled, skip}}, Fail},
		{"case check fails, requests pass", CaseResult{Checks: []Check{ck(ServerAlive, Fail)}, Requests: []RequestResult{pass, pass}}, Fail},
		{"case check errors, requests pass", CaseResult{Checks: []Check{ck("memory.load_peak", Error)}, Requests: []RequestResult{pass}}, Fail},
		{"case check known", CaseResult{Checks: []Check{ck("perf.load", Known)}, Requests: []RequestResult{pass}}, Known},
		{"case check skipped", CaseResult{Checks: []Check{ck("perf.load", Skip)}, Requests: []RequestResult{pass}}, Pass},
		{"case check cancelled", CaseResult{Checks: []Check{ck("perf.load", Cancelled)}, Requests: []RequestResult{pass}}, Cancelled},
		{"case check unknown status", CaseResult{Checks: []Check{ck("perf.load", "ok")}, Requests: []RequestResult{pass}}, Fail},
		{"case errors, requests pass", CaseResult{Errors: []string{"artifact: disk full"}, Requests: []RequestResult{pass}}, Error},
		{"case errors and failure", CaseResult{Errors: []string{"x"}, Requests: []RequestResult{fail}}, Fail},
		{"case errors and cancelled", CaseResult{Errors: []string{"x"}, Requests: []RequestResult{cancelled}}, Error},
		{"flaky", CaseResult{Requests: []RequestResult{pass, flaky}}, Flaky},
		{"flaky and fail", CaseResult{Requests: []RequestResult{flaky, fail}}, Fail},
		{"flaky and errored request", CaseResult{Requests: []RequestResult{flaky, errd}}, Fail},
		{"flaky and skipped request", CaseResult{Requests: []RequestResult{flaky, skip}}, Fail},
		{"flaky and known", CaseResult{Requests: []RequestResult{known, flaky}}, Flaky},
		{"flaky and cancelled", CaseResult{Requests: []RequestResult{flaky, cancelled}}, Cancelled},
		{"flaky and case errors", CaseResult{Errors: []string{"x"}, Requests: []RequestResult{flaky}}, Error},
		{"case check flaky", CaseResult{Checks: []Check{ck("perf.load", Flaky)}, Requests: []RequestResult{pass}}, Flaky},
		{"unknown request status is recomputed", CaseResult{Requests: []RequestResult{req("weird", ck("a", Pass))}}, Pass},
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
	pass := CaseResult{ID: "p", Requests: []RequestResult{req(Pass, ck("a", Pass))}}
	fail := CaseResult{ID: "f", Requests: []RequestResult{req(Pass, ck("a", Fail))}}
	errd := CaseResult{ID: "e"} // no requests
	known := CaseResult{ID: "k", Requests: []RequestResult{req(Known, ck("a", Known))}}
	cancelled := CaseResult{ID: "c", Requests: []RequestResult{req(Cancelled)}}
	staleFail := CaseResult{ID: "s", Status: Fail, Requests: []RequestResult{req(Fail, ck("a", Pass))}}
	flaky := CaseResult{ID: "y", Requests: []RequestResult{req(Pass, ck("perf.e2e", Flaky))}}

	tests := []struct {
		name  string
		cases []CaseResult
		errs  []string
		want  Status
	}{
		{"empty", nil, nil, Error},
		{"empty with errors", nil, []string{"suite: no cases"}, Error},
		{"one pass", []CaseResult{pass}, nil, Pass},
		{"all pass", []CaseResult{pass, pass}, nil, Pass},
		{"stale case status recomputed", []CaseResult{staleFail}, nil, Pass},
		{"fail then pass", []CaseResult{fail, pass}, nil, Fail},
		{"pass then fail", []CaseResult{pass, fail}, nil, Fail},
		{"run errors", []CaseResult{pass}, []string{"gpu: unavailable"}, Error},
		{"run errors and fail", []CaseResult{fail}, []string{"x"}, Fail},
		{"case error", []CaseResult{pass, errd}, nil, Error},
		{"case error and fail", []CaseResult{errd, fail}, nil, Fail},
		{"cancelled", []CaseResult{pass, cancelled}, nil, Cancelled},
		{"cancelled and error", []CaseResult{cancelled, errd}, nil, Error},
		{"cancelled and fail", []CaseResult{cancelled, fail}, nil, Fail},
		{"known", []CaseResult{pass, known}, nil, Known},
		{"known and cancelled", []CaseResult{known, cancelled}, nil, Cancelled},
		{"known and fail", []CaseResult{known, fail}, nil, Fail},
		{"flaky", []CaseResult{pass, flaky}, nil, Flaky},
		{"flaky and known", []CaseResult{known, flaky}, nil, Flaky},
		{"flaky and fail", []CaseResult{flaky, fail}, nil, Fail},
		{"flaky and case error", []CaseResult{flaky, errd}, nil, Error},
		{"flaky and run errors", []CaseResult{flaky}, []string{"x"}, Error},
		{"flaky and cancelled", []CaseResult{flaky, cancelled}, nil, Cancelled},
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
	r := &Result{
		Status: Pass,
		Cases: []CaseResult{
			{
				ID:     "t2i",
				Status: Pass,
				Requests: []RequestResult{
					{Index: 1, Of: 3, Status: Fail, Checks: []Check{ck(ServerAlive, Pass), ck(OutputValid, Pass)}},
					{Index: 2, Of: 3, Status: Pass, Checks: []Check{ck(ServerAlive, Pass), ck(OutputValid, Fail)}},
					{Index: 3, Of: 3, Status: Pass, Checks: []Check{ck(ServerAlive, Skip)}},
				},
			},
			{
				ID:     "t2v",
				Status: Fail,
				Requests: []RequestResult{
					{Index: 1, Of: 2, Status: Pass, Checks: []Check{ck(ServerAlive, Pass), ck("perf.e2e", Known)}},
					{Index: 2, Of: 2, Status: Cancelled, Checks: []Check{ck(ServerAlive, Error)}},
				},
			},
			{ID: "down", Status: Pass, Checks: []Check{ck(ServerAlive, Fail)}},
		},
	}
	Finalize(r)
	type got struct {
		Run      Status
		Cases    []Status
		Requests [][]Status
	}
	g := got{Run: r.Status}
	for _, c := range r.Cases {
		g.Cases = append(g.Cases, c.Status)
		var rs []Status
		for _, rr := range c.Requests {
			rs = append(rs, rr.Status)
		}
		g.Requests = append(g.Requests, rs)
	}
	want := got{
		Run:      Fail,
		Cases:    []Status{Fail, Cancelled, Fail},
		Requests: [][]Status{{Pass, Fail, Skip}, {Known, Cancelled}, nil},
	}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("Finalize (-want +got):\n%s", diff)
	}
}

func TestHelpers(t *testing.T) {
	got := []Check{
		Passed(ServerAlive, "200 OK"),
		Failed(OutputValid, "truncated PNG"),
		Errored(PerfRecord, "read performance.log: permission denied"),
		Skipped("consistency.ssim", "no ground truth"),
	}
	want := []Check{
		{Name: ServerAlive, Status: Pass, Detail: "200 OK"},
		{Name: OutputValid, Status: Fail, Detail: "truncated PNG"},
		{Name: PerfRecord, Status: Error, Detail: "read performance.log: permission denied"},
		{Name: "consistency.ssim", Status: Skip, Detail: "no ground truth"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("helpers (-want +got):\n%s", diff)
	}
	a, b := Float(1.5), Float(1.5)
	if a == b || *a != 1.5 {
		t.Errorf("Float: want distinct pointers to 1.5, got %p=%v %p=%v", a, *a, b, *b)
	}
}
