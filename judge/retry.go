package judge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// maxRetries is SGLang's max_retries: a failed case is run again at most six times
// (run_pytest in test/runner/pytest_runner.py; PR #39206: "retry only failed pytest items,
// with at most six retries").
const maxRetries = 6

// retryVerdict says whether a failed case may be run again, and why.
type retryVerdict struct {
	Retryable bool
	Why       string
}

// infraMarkers are the failures SGLang's runner retries besides performance ones, found
// anywhere in the output of an attempt (_is_retryable_failure: TimeoutError, SafetensorError,
// FileNotFoundError, out of memory, oom killer), matched here in a failed check's detail or
// the case's server log tail. Lower case: matched without letter case, as SGLang lowers the
// output for the memory ones.
var infraMarkers = []string{"timeouterror", "safetensorerror", "filenotfounderror", "out of memory", "oom killer"}

// retryOf is SGLang's rule for retrying a failed case (PR #39206; _is_retryable_failure in
// test/runner/pytest_runner.py and its tests test_validation_failures_are_not_retryable,
// test_performance_failures_are_retryable, test_infrastructure_failure_policy_is_unchanged):
//   - a consistency failure is never retried, even beside a retryable one: a failed
//     consistency.* check (a missing ground truth included; consistency.repeat.* too: a state
//     leak is a validation failure) or a missing audio ground truth
//     ("Consistency check failed for", "GT not found for");
//   - a case whose failures are all perf.* or memory.* checks is retried ("[performance]");
//   - so is an infrastructure failure: a request that hung or a server start that timed out
//     (TimeoutError), or "out of memory",
//     "oom killer", SafetensorError, TimeoutError, FileNotFoundError in a failure's detail or
//     the server's log tail;
//   - any other failure (output.valid, an audio metric, a crash) is not retried.
//
// A case that did not fail is not retried.
func retryOf(cr results.CaseResult) retryVerdict {
	if CaseStatus(cr) != results.Fail {
		return retryVerdict{Why: "did not fail"}
	}
	var failed []results.Check
	for _, c := range cr.Checks {
		if bad(c.Status) {
			failed = append(failed, c)
		}
	}
	for _, rr := range cr.Requests {
		for _, c := range rr.Checks {
			if bad(c.Status) {
				failed = append(failed, c)
			}
		}
	}
	for _, c := range failed {
		g := checks.KindOf(c.Name).Group
		if g == checks.GroupConsistency || g == checks.GroupRepeat || g == checks.GroupAudio && strings.Contains(c.Detail, "GT not found") {
			return retryVerdict{Why: fmt.Sprintf("%s failed: consistency failures are never retried", c.Name)}
		}
	}
	perf := len(failed) > 0 && !slices.ContainsFunc(failed, func(c results.Check) bool {
		g := checks.KindOf(c.Name).Group
		return g != checks.GroupPerf && g != checks.GroupMemory
	})
	if perf {
		return retryVerdict{Retryable: true, Why: "only perf and memory checks failed"}
	}
	for _, c := range failed {
		if strings.HasPrefix(c.Cause, "request hung") || c.Cause == checks.CauseStartTimeout {
			return retryVerdict{Retryable: true, Why: c.Name + ": timed out (TimeoutError)"}
		}
	}
	texts := slices.Clone(cr.LogTail)
	for _, c := range failed {
		texts = append(texts, c.Detail)
	}
	for _, t := range texts {
		low := strings.ToLower(t)
		for _, m := range infraMarkers {
			if strings.Contains(low, m) {
				return retryVerdict{Retryable: true, Why: fmt.Sprintf("an infrastructure failure (%q)", m)}
			}
		}
	}
	if len(failed) == 0 {
		// Failed without a failed check: a required request was skipped, never sent.
		return retryVerdict{Why: "a required request was not run"}
	}
	return retryVerdict{Why: fmt.Sprintf("%s failed, which is not a perf, memory or infrastructure failure", failed[0].Name)}
}

// RetryBlocked is SGLang's partition-wide rule: its runner decides once per attempt, over the
// whole attempt's output, so one failed case that may not be retried keeps every other failed
// case of the attempt from being retried (run_pytest returns at the first non-retryable
// attempt). It returns the first such case and why, or "" when every failed case of the
// attempt may be retried.
func RetryBlocked(attempt []results.CaseResult) string {
	for _, cr := range attempt {
		if CaseStatus(cr) != results.Fail {
			continue
		}
		if v := retryOf(cr); !v.Retryable {
			return fmt.Sprintf("case %s: %s", cr.ID, v.Why)
		}
	}
	return ""
}

func bad(s results.Status) bool {
	return s != results.Pass && s != results.Skip && s != results.Known && s != results.Flaky && s != results.Cancelled
}
