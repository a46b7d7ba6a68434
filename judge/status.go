package judge

import "github.com/diffusion-check/diffusion-check/results"

// The verdict rules turn the checks of a run into the statuses of its requests, cases and the
// run itself. They are pure and order independent: each status is the worst thing seen, in
// this precedence (highest first):
//
//	request: fail (a check failed or errored) > cancelled (a check was cancelled) > flaky > known > pass > skip
//	case:    fail > error > cancelled > skip > flaky > known > pass
//	run:     fail > error > cancelled > flaky > known > pass
//
// so no later pass or skip can hide an earlier failure, and a flaky check (a failure that
// its confirmation requests did not reproduce, under on_unconfirmed: flaky) never hides a
// failure of another check. Flaky ranks above known: a known failure is explained by an
// entry someone wrote, a flaky one by nobody yet. A check or request whose status is not one
// of the known words counts as a failure: a typo must not pass.

// RequestStatus is the status of a finished request with the given checks:
//   - fail if any check failed or errored (or has an unknown status);
//   - otherwise cancelled if any check was cancelled;
//   - otherwise flaky if any check is flaky;
//   - otherwise known if any check is a known failure;
//   - otherwise pass if at least one check passed;
//   - otherwise skip if every check was skipped;
//   - error if there are no checks at all: a request nobody checked must not pass silently.
//
// It applies to finished requests only. A request the runner cut short keeps the Cancelled
// status it set: Finalize does not recompute it.
func RequestStatus(cs []results.Check) results.Status {
	if len(cs) == 0 {
		return results.Error
	}
	var t tally
	for _, c := range cs {
		if !t.note(c.Status) { // Fail, Error, or a status that is not ours
			return results.Fail
		}
	}
	if !t.cancelled && !t.flaky && !t.known && !t.passed {
		return results.Skip
	}
	return t.status()
}

// CaseStatus is the status of a case, from its case-level checks and every request:
//   - fail if a case-level check failed or errored, or a request failed or errored, or a
//     request was skipped (every request of a case is required);
//   - otherwise error if the case has Errors, or no requests at all;
//   - otherwise cancelled if a request or case-level check was cancelled;
//   - otherwise skip if the case is Skipped (SGLang's harness skips it, e.g. a video job that
//     timed out on AMD): then, and only then, a skipped request does not fail the case;
//   - otherwise flaky if a request or case-level check is flaky;
//   - otherwise known if a request or case-level check is known;
//   - otherwise pass.
//
// Request statuses are recomputed from their checks with RequestStatus, except for requests
// marked Cancelled, so a stale stored status cannot change the verdict. A case with no
// requests whose stored status is Cancelled (cancelled before its first request) is
// cancelled instead of error, unless a case-level check failed or it has Errors.
func CaseStatus(c results.CaseResult) results.Status {
	var t tally
	for _, ck := range c.Checks {
		if !t.note(ck.Status) {
			return results.Fail
		}
	}
	for _, rr := range c.Requests {
		st := requestStatus(rr)
		if st == results.Skip && c.Skipped == "" {
			return results.Fail // a required request did not pass
		}
		if !t.note(st) { // Fail, Error: a required request did not pass
			return results.Fail
		}
	}
	if c.Skipped != "" && !t.cancelled && len(c.Errors) == 0 && len(c.Requests) > 0 {
		return results.Skip
	}
	if len(c.Requests) == 0 {
		if c.Status == results.Cancelled {
			t.cancelled = true
		} else {
			t.errored = true
		}
	}
	t.errored = t.errored || len(c.Errors) > 0
	return t.status()
}

// tally is what a verdict has seen short of a failure, for the precedence of the statuses
// that rank above a pass.
type tally struct{ errored, cancelled, flaky, known, passed bool }

// note records st and reports whether it is one that does not fail: pass, skip, flaky,
// known or cancelled. Fail, Error and any status that is not ours it leaves to the caller.
func (t *tally) note(st results.Status) bool {
	switch st {
	case results.Pass:
		t.passed = true
	case results.Skip:
	case results.Flaky:
		t.flaky = true
	case results.Known:
		t.known = true
	case results.Cancelled:
		t.cancelled = true
	default:
		return false
	}
	return true
}

// status is the status of something that did not fail, by precedence: error, then
// cancelled, then flaky, then known, else pass.
func (t tally) status() results.Status {
	switch {
	case t.errored:
		return results.Error
	case t.cancelled:
		return results.Cancelled
	case t.flaky:
		return results.Flaky
	case t.known:
		return results.Known
	}
	return results.Pass
}

// RunStatus is the status of a run from its cases and its run-level errors: fail if any case
// failed; otherwise error if any case errored or errs is not empty; otherwise cancelled if any
// case was cancelled; otherwise flaky if any case is flaky; otherwise known if any case is
// known; otherwise pass. A run without cases
// is an error: it checked nothing. Case statuses are recomputed with CaseStatus.
func RunStatus(cases []results.CaseResult, errs []string) results.Status {
	t := tally{errored: len(errs) > 0 || len(cases) == 0}
	for _, c := range cases {
		switch st := CaseStatus(c); st {
		case results.Fail:
			return results.Fail
		case results.Error:
			t.errored = true
		default:
			t.note(st)
		}
	}
	return t.status()
}

// Finalize judges a run's record before the run writes it (runner: every write of
// results.json): the status of every request from its checks (except those marked
// Cancelled), then of every case and the run (Settle). It is the one place a record's
// statuses are set from its checks; the writer and the readers check them.
func Finalize(r *results.Result) {
	for i := range r.Cases {
		c := &r.Cases[i]
		for j := range c.Requests {
			c.Requests[j].Status = requestStatus(c.Requests[j])
		}
	}
	Settle(r)
}

// Settle sets the status of every case of r and of the run (CaseStatus, LaneStatus) from
// their checks and requests. A record a reader rebuilt or completed from requests.jsonl, whose
// request lines the run judged as it wrote them, has no case or run status of its own: cmd
// settles it when it reads it.
func Settle(r *results.Result) {
	for i := range r.Cases {
		r.Cases[i].Status = CaseStatus(r.Cases[i])
	}
	r.Status = LaneStatus(r)
}

// LaneStatus is the status of a run, or of a lane merged from runs, from its cases and its
// errors (RunStatus). A partition its plan left empty (a plan file from before plans dropped
// empty partitions, or a selection that left out every case) checked nothing because there
// was nothing to check: it passes.
func LaneStatus(r *results.Result) results.Status {
	if r.EmptyPartition() || r.NothingSelected() {
		return results.Pass
	}
	return RunStatus(r.Cases, r.Errors)
}

// requestStatus is a request's status recomputed from its checks, keeping Cancelled.
func requestStatus(rr results.RequestResult) results.Status {
	if rr.Status == results.Cancelled {
		return results.Cancelled
	}
	return RequestStatus(rr.Checks)
}
