package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// SGLang's verdict rules on the retry and the statuses (docs/sglang-compat.md, "Verdict
// rules"), each at its boundary, with the SGLang source it follows; the perf and shape rules
// are checks' (checks/perf_retry_shape_rules_test.go).

// Rule: a failed case is retried when its failures are all performance (perf, memory) or
// infrastructure ones (a timeout, out of memory); never when a consistency check failed, even
// beside a retryable failure; and one such case blocks the retries of the whole attempt.
// Source: PR #39206, pytest_runner.py _is_retryable_failure and its tests
// test_validation_failures_are_not_retryable, test_performance_failures_are_retryable,
// test_infrastructure_failure_policy_is_unchanged; run_pytest (max_retries = 6).
func TestRetryRule(t *testing.T) {
	const src = "PR #39206: pytest_runner.py _is_retryable_failure, run_pytest"
	req := func(cs ...results.Check) results.CaseResult {
		return results.CaseResult{ID: "c", Requests: []results.RequestResult{{Index: 1, Of: 1, Checks: append([]results.Check{checks.Passed(results.ServerAlive,
			"")}, cs...)}}}
	}
	withTail := func(cr results.CaseResult, tail ...string) results.CaseResult { cr.LogTail = tail; return cr }
	for _, tt := range []struct {
		input string
		cr    results.CaseResult
		want  bool
	}{
		{"a passing case is not retried", req(checks.Passed(checks.PerfE2E, "")), false},
		{"E2E latency failed ([performance] Validation failed for 'E2E Latency')", req(checks.Failed(checks.PerfE2E, "")), true},
		{"load latency failed", results.CaseResult{ID: "c", Checks: []results.Check{checks.Failed(checks.PerfLoad, "")}, Requests: req().Requests}, true},
		{"denoise step and memory failed", req(checks.Failed(checks.PerfDenoiseAvg, ""), checks.Failed(checks.MemoryRuntimePeak, "")), true},
		{"consistency failed", req(checks.Failed(checks.ConsistencySSIM, "")), false},
		{"performance and consistency failed", req(checks.Failed(checks.PerfE2E, ""), checks.Failed(checks.ConsistencySSIM, "")), false},
		{"GT not found", req(checks.Failed(checks.ConsistencyGroup, "GT not found for c: no ground truth")), false},
		{"consistency failed beside a timeout", req(results.Check{Name: results.OutputPresent, Status: results.Fail, Cause: "request hung: no output within 2s"},
			checks.Failed(checks.ConsistencySSIM, "")), false},
		{"a request timed out (TimeoutError)", req(results.Check{Name: results.OutputPresent, Status: results.Fail,
			Cause: "request hung: no output within 2s"}), true},
		{"the server start timed out (TimeoutError in _wait_for_ready)",
			results.CaseResult{ID: "c", Checks: []results.Check{{Name: results.ServerAlive, Status: results.Fail, Cause: checks.CauseStartTimeout}},
				Requests: []results.RequestResult{{Index: 1, Of: 1, Checks: []results.Check{checks.Skipped(results.ServerAlive, "not sent")}}}}, true},
		{"the server exited while starting (RuntimeError)",
			results.CaseResult{ID: "c", Checks: []results.Check{{Name: results.ServerAlive, Status: results.Fail, Cause: "server failed to start, exit 1"}},
				Requests: []results.RequestResult{{Index: 1, Of: 1, Checks: []results.Check{checks.Skipped(results.ServerAlive, "not sent")}}}}, false},
		{"the server ran out of memory", withTail(req(checks.Failed(results.ServerAlive, "server exited")), "torch.OutOfMemoryError: CUDA out of memory."),
			true},
		{"SafetensorError in the log", withTail(req(checks.Failed(results.OutputPresent, "500")), "safetensors_rust.SafetensorError: invalid header"), true},
		{"an output assertion is not retried", req(checks.Failed(results.OutputValid, "size 64x64, want 256x256")), false},
		{"an audio metric failure is not retried", req(checks.Failed(checks.AudioSpectralSimilarity, "")), false},
		{"audio GT not found", req(checks.Failed(checks.AudioGroup, "Audio GT not found for c")), false},
	} {
		if got := retryOf(tt.cr); got.Retryable != tt.want {
			t.Errorf("%s (%s): retryable %v (%s), want %v", tt.input, src, got.Retryable, got.Why, tt.want)
		}
	}
	perf, cons := req(checks.Failed(checks.PerfE2E, "")), req(checks.Failed(checks.ConsistencySSIM, ""))
	cons.ID = "other"
	if why := RetryBlocked([]results.CaseResult{perf, cons}); !strings.Contains(why, "case other") {
		t.Errorf("a consistency failure in the attempt (%s): blocked %q, want it named", src, why)
	}
	if why := RetryBlocked([]results.CaseResult{perf, req(checks.Passed(checks.PerfE2E, ""))}); why != "" {
		t.Errorf("only retryable failures (%s): blocked %q", src, why)
	}
	if maxRetries != 6 {
		t.Errorf("max retries %d, want SGLang's 6 (%s)", maxRetries, src)
	}
}

// Rule: a video job that times out on an AMD GPU is a skip of the whole case, not a failure;
// a failure elsewhere in the case still fails it. Source: _create_and_download_video,
// test_server_utils.py @ a7ec6b97f786 (pytest.skip under current_platform.is_hip()).
func TestAMDVideoTimeoutRule(t *testing.T) {
	const src = "_create_and_download_video, test_server_utils.py @ a7ec6b97f786"
	timedOut := results.RequestResult{Index: 2, Of: 3, Checks: []results.Check{checks.Passed(results.ServerAlive, ""), checks.AMDVideoTimeout("wan",
		40*time.Minute)}}
	notSent := results.RequestResult{Index: 3, Of: 3, Checks: []results.Check{checks.Skipped(results.ServerAlive, "not sent")}}
	ok := results.RequestResult{Index: 1, Of: 3, Checks: []results.Check{checks.Passed(results.ServerAlive, "")}}
	failed := results.RequestResult{Index: 1, Of: 3, Checks: []results.Check{checks.Failed(checks.PerfE2E, "")}}
	reqs := []results.RequestResult{ok, timedOut, notSent}
	cr := results.CaseResult{ID: "wan", Requests: reqs, Skipped: checks.SkippedBy(reqs)}
	if cr.Skipped == "" || !strings.Contains(cr.Skipped, "video job timed out on AMD after 40m0s - skipping") {
		t.Errorf("%s: skipped %q", src, cr.Skipped)
	}
	if got := CaseStatus(cr); got != results.Skip {
		t.Errorf("%s: case %s, want skip", src, got)
	}
	if got := RunStatus([]results.CaseResult{cr}, nil); got != results.Pass {
		t.Errorf("%s: run %s, want pass (a skipped case fails nothing)", src, got)
	}
	cr.Requests[0] = failed
	if got := CaseStatus(cr); got != results.Fail {
		t.Errorf("%s: a failure before the timeout: case %s, want fail", src, got)
	}
	plain := results.CaseResult{ID: "wan", Requests: []results.RequestResult{ok, notSent}}
	if got := CaseStatus(plain); got != results.Fail || checks.SkippedBy(plain.Requests) != "" {
		t.Errorf("a skipped request without the AMD timeout: case %s, want fail", got)
	}
}
