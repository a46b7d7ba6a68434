package checks

import (
	"fmt"

	"github.com/diffusion-check/diffusion-check/results"
)

// Passed returns a passing check.
func Passed(name, detail string) results.Check {
	return results.Check{Name: name, Status: results.Pass, Detail: detail}
}

// Failed returns a failed check: the measurement was made and is wrong.
func Failed(name, detail string) results.Check {
	return results.Check{Name: name, Status: results.Fail, Detail: detail}
}

// Errored returns a check that could not be made; it fails its request all the same.
func Errored(name, detail string) results.Check {
	return results.Check{Name: name, Status: results.Error, Detail: detail}
}

// Skipped returns a check that was not made on purpose (disabled, nothing to compare with).
func Skipped(name, detail string) results.Check {
	return results.Check{Name: name, Status: results.Skip, Detail: detail}
}

// Float returns a pointer to v, for Check.Value and Check.Limit.
func Float(v float64) *float64 { return &v }

// AMDVideoTimeoutCause marks the check of a video job that timed out on an AMD GPU
// (AMDVideoTimeout), which SGLang's harness skips instead of failing.
const AMDVideoTimeoutCause = "video job timed out on AMD (ROCm): SGLang skips the case"

// AMDVideoTimeout is SGLang's verdict on a video job that did not complete in time on an AMD
// GPU: pytest.skip, not a failure (_create_and_download_video in test_server_utils.py @
// a7ec6b97f786, under current_platform.is_hip()). The request's output.present is skipped
// and SkippedBy marks the whole case skipped.
func AMDVideoTimeout(caseID string, timeout fmt.Stringer) results.Check {
	return results.Check{Name: results.OutputPresent, Status: results.Skip, Cause: AMDVideoTimeoutCause,
		Detail: fmt.Sprintf(
			"%s: video job timed out on AMD after %s - skipping (SGLang's harness skips the case on an AMD GPU instead of failing it)", caseID,
			timeout)}
}

// SkippedBy is why a case is skipped as a whole, from its requests: the detail of an
// AMDVideoTimeout check, or "" when no request was skipped that way.
func SkippedBy(reqs []results.RequestResult) string {
	for _, rr := range reqs {
		for _, c := range rr.Checks {
			if c.Status == results.Skip && c.Cause == AMDVideoTimeoutCause {
				return c.Detail
			}
		}
	}
	return ""
}
