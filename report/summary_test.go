package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// TestAnnotationsFoldDerivedStepMetrics: an annotation names each check that did not pass but
// the figures derived from the denoising stage's steps, which are counted after the check
// that tells them (under the stage when it failed too): one slow stage is one cause, in the
// error of a failed request as in the warning of a flaky one.
func TestAnnotationsFoldDerivedStepMetrics(t *testing.T) {
	ck := func(name string, st results.Status, v, limit float64) results.Check {
		return val(name, st, v, limit, "ms")
	}
	slowStage := func(st results.Status) []results.Check {
		return []results.Check{
			checks.Passed(results.ServerAlive, ""),
			ck(checks.PerfE2E, st, 3876, 1742),
			ck(checks.PerfDenoiseAvg, st, 193.7, 89.6),
			ck(checks.PerfDenoiseMedian, st, 193.7, 84.6),
			ck(checks.PerfStepPrefix+"4", st, 193.8, 84.7),
			ck(checks.PerfStepPrefix+"8", st, 194, 84.5),
			ck(checks.PerfStagePrefix+checks.DenoisingStage, st, 3874, 1739),
		}
	}
	stage := checks.PerfStagePrefix + checks.DenoisingStage
	tests := []struct {
		name string
		st   results.Status
		cs   []results.Check
		want []string // the message, split at "; "
	}{{
		name: "a failed stage: E2E and the stage named, four step figures under the stage",
		st:   results.Fail,
		cs:   slowStage(results.Fail),
		want: []string{
			checks.PerfE2E + " = 3876 ms, limit 1742 ms: (no detail)",
			stage + " = 3874 ms, limit 1739 ms: (no detail)",
			"under " + stage + ": 4 step metrics, up to 2.30× the limit",
		},
	}, {
		name: "a flaky stage: the warning folds them the same way",
		st:   results.Flaky,
		cs:   slowStage(results.Flaky),
		want: []string{
			checks.PerfE2E + " (flaky) = 3876 ms, limit 1742 ms: (no detail)",
			stage + " (flaky) = 3874 ms, limit 1739 ms: (no detail)",
			"under " + stage + ": 4 step metrics, up to 2.30× the limit",
		},
	}, {
		name: "only step figures failed: the worst is named, the others counted",
		st:   results.Fail,
		cs: []results.Check{
			ck(checks.PerfStepPrefix+"4", results.Fail, 93, 84.6),
			ck(checks.PerfStepPrefix+"8", results.Fail, 101.5, 84.6),
			ck(checks.PerfStagePrefix+checks.DenoisingStage, results.Pass, 1700, 1739),
		},
		want: []string{
			checks.PerfStepPrefix + "8 = 101.5 ms, limit 84.6 ms: (no detail)",
			"1 more denoise-step metric, up to 1.10× the limit",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := results.Result{Lane: "base", Cases: []results.CaseResult{{ID: "wan", Status: tt.st, Requests: []results.RequestResult{
				{Index: 1, Of: 2, Status: results.Pass}, {Index: 2, Of: 2, Status: tt.st, Checks: tt.cs},
			}}}}
			as := Annotations([]results.Result{l}, 10)
			var got [][]string
			for _, a := range as {
				if !strings.Contains(a.Title, "request 2/2") {
					t.Errorf("annotation %q: want only request 2/2's", a.Title)
				}
				if a.Warning != (tt.st == results.Flaky) {
					t.Errorf("annotation %q: warning %v, want %v", a.Title, a.Warning, tt.st == results.Flaky)
				}
				got = append(got, strings.Split(a.Message, "; "))
			}
			if diff := cmp.Diff([][]string{tt.want}, got); diff != "" {
				t.Errorf("annotation messages (-want +got):\n%s", diff)
			}
		})
	}
}
