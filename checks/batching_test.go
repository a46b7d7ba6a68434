package checks

import (
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/results"
)

// TestDynamicBatchingRules: SGLang's assertions of the dynamic-batching smoke, in its order
// (test_server_common.py _test_dynamic_batching_smoke and its unit tests): a merged pair with
// each image its own passes; a failed reference or batched request, equal ids, equal images,
// a swapped pair, a failure line and a missing marker each fail with SGLang's words and the
// values; a smoke the run's cancel cut short is skipped, not failed.
func TestDynamicBatchingRules(t *testing.T) {
	good := func() BatchEvidence {
		return BatchEvidence{
			References: []BatchAnswer{{ID: "r1", SHA256: "a"}, {ID: "r2", SHA256: "b"}},
			Batched:    []BatchAnswer{{ID: "b1", SHA256: "a"}, {ID: "b2", SHA256: "b"}},
			Own:        []float64{0, 0.5}, Cross: []float64{40, 41},
			LogRead: true, LogWait: "10s",
		}
	}
	for _, tc := range []struct {
		name string
		edit func(e *BatchEvidence)
		want string
	}{
		{"a merged pair", func(*BatchEvidence) {}, ""},
		{"a failed reference", func(e *BatchEvidence) {
			e.References = e.References[:1]
			e.References[0].Failed = "500 boom"
			e.Batched = nil
		}, "reference request 1: 500 boom"},
		{"a batched answer without id", func(e *BatchEvidence) { e.Batched[1].ID = "" }, "batched request 2: the response needs an id"},
		{"the same id", func(e *BatchEvidence) { e.Batched[1].ID = "b1" }, `the batched responses' ids must be distinct, both are "b1"`},
		{"the same image", func(e *BatchEvidence) { e.Batched[1].SHA256 = "a" }, "the batched outputs must be distinct: both images have SHA-256 a"},
		{"a swapped pair", func(e *BatchEvidence) { e.Own, e.Cross = []float64{40, 41}, []float64{0, 0.5} },
			"batched response 1 maps to the wrong request (own MAE=40.0000, cross MAE=0.0000)"},
		{"images not compared", func(e *BatchEvidence) {
			e.Own, e.Cross, e.DistanceFailed = nil, nil, "reference 1 and batched output 1 have different shapes"
		},
			"comparing the batched images with the references: reference 1 and batched output 1 have different shapes"},
		{"a failure line", func(e *BatchEvidence) { e.FailedLine = "ERROR Dynamic batching failed (oom)" },
			`the server reported a dynamic batching failure: "ERROR Dynamic batching failed (oom)"`},
		{"a missing marker", func(e *BatchEvidence) { e.Missing = []string{BatchProcessedMarker} },
			"missing dynamic batching server evidence within 10s: Processed dynamic batch of 2/2 request(s)"},
		{"a server that died", func(e *BatchEvidence) { e.LogRead, e.Halt = false, "the server exited (status 139)" }, "the server exited (status 139)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := good()
			tc.edit(&e)
			c := DynamicBatching(e, false)
			switch {
			case tc.want == "" && c.Status != results.Pass:
				t.Errorf("got %+v, want a pass", c)
			case tc.want != "" && (c.Status != results.Fail || !strings.Contains(c.Detail, tc.want)):
				t.Errorf("got %+v, want a failure saying %q", c, tc.want)
			}
		})
	}
	e := good()
	e.Batched, e.Own, e.Cross, e.LogRead, e.Halt = nil, nil, nil, false, "the run was cancelled"
	if c := DynamicBatching(e, true); c.Status != results.Skip || !strings.Contains(c.Detail, "cancelled") {
		t.Errorf("a cancelled smoke: got %+v, want a skip", c)
	}
}
