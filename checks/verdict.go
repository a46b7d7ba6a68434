package checks

import "fmt"

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
func RequestStatus(cs []Check) Status {
	if len(cs) == 0 {
		return Error
	}
	var cancelled, flaky, known, passed bool
	for _, c := range cs {
		switch c.Status {
		case Pass:
			passed = true
		case Skip:
		case Flaky:
			flaky = true
		case Known:
			known = true
		case Cancelled:
			cancelled = true
		default: // Fail, Error, or a status that is not ours
			return Fail
		}
	}
	switch {
	case cancelled:
		return Cancelled
	case flaky:
		return Flaky
	case known:
		return Known
	case passed:
		return Pass
	}
	return Skip
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
func CaseStatus(c CaseResult) Status {
	var errored, cancelled, flaky, known bool
	for _, ck := range c.Checks {
		switch ck.Status {
		case Pass, Skip:
		case Flaky:
			flaky = true
		case Known:
			known = true
		case Cancelled:
			cancelled = true
		default:
			return Fail
		}
	}
	for _, rr := range c.Requests {
		switch requestStatus(rr) {
		case Pass:
		case Flaky:
			flaky = true
		case Known:
			known = true
		case Cancelled:
			cancelled = true
		case Skip:
			if c.Skipped == "" {
				return Fail // a required request did not pass
			}
		default: // Fail, Error: a required request did not pass
			return Fail
		}
	}
	if c.Skipped != "" && !cancelled && len(c.Errors) == 0 && len(c.Requests) > 0 {
		return Skip
	}
	if len(c.Requests) == 0 {
		if c.Status == Cancelled {
			cancelled = true
		} else {
			errored = true
		}
	}
	return settle(errored || len(c.Errors) > 0, cancelled, flaky, known)
}

// settle is the status of something that did not fail, by precedence: error, then cancelled,
// then flaky, then known, else pass.
func settle(errored, cancelled, flaky, known bool) Status {
	switch {
	case errored:
		return Error
	case cancelled:
		return Cancelled
	case flaky:
		return Flaky
	case known:
		return Known
	}
	return Pass
}

// RunStatus is the status of a run from its cases and its run-level errors: fail if any case
// failed; otherwise error if any case errored or errs is not empty; otherwise cancelled if any
// case was cancelled; otherwise flaky if any case is flaky; otherwise known if any case is
// known; otherwise pass. A run without cases
// is an error: it checked nothing. Case statuses are recomputed with CaseStatus.
func RunStatus(cases []CaseResult, errs []string) Status {
	errored := len(errs) > 0 || len(cases) == 0
	var cancelled, flaky, known bool
	for _, c := range cases {
		switch CaseStatus(c) {
		case Fail:
			return Fail
		case Error:
			errored = true
		case Cancelled:
			cancelled = true
		case Flaky:
			flaky = true
		case Known:
			known = true
		}
	}
	return settle(errored, cancelled, flaky, known)
}

// Finalize recomputes, in place, the status of every request (except those marked Cancelled),
// every case and the run from the checks, so that a writer never stores a stale status.
func Finalize(r *Result) {
	for i := range r.Cases {
		c := &r.Cases[i]
		for j := range c.Requests {
			c.Requests[j].Status = requestStatus(c.Requests[j])
		}
		c.Status = CaseStatus(*c)
	}
	r.Status = RunStatus(r.Cases, r.Errors)
	// A partition its plan left empty (a plan file from before plans dropped empty
	// partitions, or a selection that left out every case) checked nothing because there was
	// nothing to check: it passes.
	if r.EmptyPartition() || r.nothingSelected() {
		r.Status = Pass
	}
}

// EmptyPartition reports whether r is the run of a partition its plan gave no cases, that
// ran none and had no problem: it passes, and a merge does not count it as speaking for its
// lane.
func (r *Result) EmptyPartition() bool {
	return len(r.Cases) == 0 && len(r.Errors) == 0 && r.Partition.Index >= 0 &&
		r.Partition.Index < len(r.Planned) && len(r.Planned[r.Partition.Index]) == 0
}

// requestStatus is a request's status recomputed from its checks, keeping Cancelled.
func requestStatus(rr RequestResult) Status {
	if rr.Status == Cancelled {
		return Cancelled
	}
	return RequestStatus(rr.Checks)
}

// Passed returns a passing check.
func Passed(name, detail string) Check { return Check{Name: name, Status: Pass, Detail: detail} }

// Failed returns a failed check: the measurement was made and is wrong.
func Failed(name, detail string) Check { return Check{Name: name, Status: Fail, Detail: detail} }

// Errored returns a check that could not be made; it fails its request all the same.
func Errored(name, detail string) Check { return Check{Name: name, Status: Error, Detail: detail} }

// Skipped returns a check that was not made on purpose (disabled, nothing to compare with).
func Skipped(name, detail string) Check { return Check{Name: name, Status: Skip, Detail: detail} }

// Float returns a pointer to v, for Check.Value and Check.Limit.
func Float(v float64) *float64 { return &v }

// AMDVideoTimeoutCause marks the check of a video job that timed out on an AMD GPU
// (AMDVideoTimeout), which SGLang's harness skips instead of failing.
const AMDVideoTimeoutCause = "video job timed out on AMD (ROCm): SGLang skips the case"

// AMDVideoTimeout is SGLang's verdict on a video job that did not complete in time on an AMD
// GPU: pytest.skip, not a failure (_create_and_download_video in test_server_utils.py @
// a7ec6b97f786, under current_platform.is_hip()). The request's output.present is skipped
// and SkippedBy marks the whole case skipped.
func AMDVideoTimeout(caseID string, timeout fmt.Stringer) Check {
	return Check{Name: OutputPresent, Status: Skip, Cause: AMDVideoTimeoutCause,
		Detail: fmt.Sprintf(
			"%s: video job timed out on AMD after %s - skipping (SGLang's harness skips the case on an AMD GPU instead of failing it)", caseID,
			timeout)}
}

// SkippedBy is why a case is skipped as a whole, from its requests: the detail of an
// AMDVideoTimeout check, or "" when no request was skipped that way.
func SkippedBy(reqs []RequestResult) string {
	for _, rr := range reqs {
		for _, c := range rr.Checks {
			if c.Status == Skip && c.Cause == AMDVideoTimeoutCause {
				return c.Detail
			}
		}
	}
	return ""
}
