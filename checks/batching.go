package checks

import (
	"fmt"
	"strings"

	"github.com/diffusion-check/diffusion-check/results"
)

// BatchingDynamic is SGLang's dynamic-batching smoke (test_server_common.py
// _test_dynamic_batching_smoke, read through the search index at a commit newer than
// pandalee99/sglang @ cce0a1244, with its unit tests): a case's two batching requests sent
// alone as references, then both at once; each batched answer must be a request of its own
// with its own image, closer to its own reference than to the other's, and the server's log
// must show the pair merged.
const BatchingDynamic = "batching.dynamic"

// The scheduler's log lines the smoke reads after the batched answers: both markers, and no
// failure line.
const (
	BatchDispatchMarker  = "Dynamic batch dispatch: size=2/2, user_max=2"
	BatchProcessedMarker = "Processed dynamic batch of 2/2 request(s)"
	BatchFailedMarker    = "Dynamic batching failed"
)

// BatchAnswer is one image request of the smoke as the runner made it: its response id, the
// SHA-256 of its image, or why it has no usable image (the request failed, its answer is not
// one image of the requested format and size).
type BatchAnswer struct {
	ID, SHA256 string
	Failed     string
}

// BatchEvidence is what the runner measured of the smoke, as far as it got: the runner sends
// the batched pair only after both references answered, compares images only when all four
// did, and reads the log only after the batched answers.
type BatchEvidence struct {
	References, Batched []BatchAnswer
	// Own[i] and Cross[i] are the mean absolute RGB difference (0–255) of batched image i
	// against reference i and against the other reference; DistanceFailed says why they were
	// not computed when all four images were there.
	Own, Cross     []float64
	DistanceFailed string
	// LogRead is set once the log was watched; Missing are the markers it did not show
	// within LogWait, FailedLine the first line with BatchFailedMarker.
	LogRead    bool
	Missing    []string
	FailedLine string
	LogWait    string
	// Halt says why the smoke stopped early (the server died, the run was cancelled).
	Halt string
}

// DynamicBatching judges the smoke with SGLang's assertions in their order: each reference
// answered, each batched request answered, distinct response ids, distinct images, each
// batched image closer to its own reference, then the log (no failure line, both markers).
// cancelled makes a smoke the run's cancel cut short a skip, not a failure.
func DynamicBatching(e BatchEvidence, cancelled bool) results.Check {
	c := results.Check{Name: BatchingDynamic, Status: results.Pass}
	if why := batchProblem(e); why != "" {
		c.Status, c.Detail, c.Cause = results.Fail, why, "dynamic batching broken"
		if cancelled {
			c.Status, c.Detail, c.Cause = results.Skip, "not finished: the run was cancelled ("+why+")", ""
		}
		return c
	}
	c.Detail = fmt.Sprintf("the pair ran as one batch: own MAE %.4f and %.4f against cross MAE %.4f and %.4f; the log shows %q and %q",
		e.Own[0], e.Own[1], e.Cross[0], e.Cross[1], BatchDispatchMarker, BatchProcessedMarker)
	return c
}

// batchProblem is the first of the smoke's assertions e breaks, "" for none.
func batchProblem(e BatchEvidence) string {
	for _, step := range []struct {
		what    string
		answers []BatchAnswer
	}{{"reference", e.References}, {"batched", e.Batched}} {
		for i, a := range step.answers {
			if a.Failed != "" {
				return fmt.Sprintf("%s request %d: %s", step.what, i+1, a.Failed)
			}
			if a.ID == "" {
				return fmt.Sprintf("%s request %d: the response needs an id", step.what, i+1)
			}
		}
		if len(step.answers) < 2 {
			return orHalt(e.Halt, fmt.Sprintf("the %s requests were not all sent", step.what))
		}
	}
	b := e.Batched
	if b[0].ID == b[1].ID {
		return fmt.Sprintf("the batched responses' ids must be distinct, both are %q", b[0].ID)
	}
	if b[0].SHA256 == b[1].SHA256 {
		return fmt.Sprintf("the batched outputs must be distinct: both images have SHA-256 %s", b[0].SHA256)
	}
	if e.DistanceFailed != "" {
		return "comparing the batched images with the references: " + e.DistanceFailed
	}
	if len(e.Own) < len(b) || len(e.Cross) < len(b) {
		return orHalt(e.Halt, "the batched images were not compared with the references")
	}
	for i := range b {
		if e.Own[i] >= e.Cross[i] {
			return fmt.Sprintf("batched response %d maps to the wrong request (own MAE=%.4f, cross MAE=%.4f)", i+1, e.Own[i], e.Cross[i])
		}
	}
	switch {
	case !e.LogRead:
		return orHalt(e.Halt, "the server log was not read")
	case e.FailedLine != "":
		return "the server reported a dynamic batching failure: " + snippet([]byte(e.FailedLine))
	case len(e.Missing) > 0:
		return fmt.Sprintf("missing dynamic batching server evidence within %s: %s", e.LogWait, strings.Join(e.Missing, ", "))
	}
	return ""
}

// orHalt is halt when it says why the smoke stopped, else why.
func orHalt(halt, why string) string {
	if halt != "" {
		return halt
	}
	return why
}
