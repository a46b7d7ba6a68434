package checks

import "fmt"

// EmptyPartition reports whether r is the run of a partition its plan gave no cases, that
// ran none and had no problem: it passes, and a merge does not count it as speaking for its
// lane.
func (r *Result) EmptyPartition() bool {
	return len(r.Cases) == 0 && len(r.Errors) == 0 && r.Partition.Index >= 0 &&
		r.Partition.Index < len(r.Planned) && len(r.Planned[r.Partition.Index]) == 0
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
