package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/results"
)

// TestIdleLine: the lane's line names each case whose results say how long the GPU waited for
// the harness, and is left out when none says.
func TestIdleLine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cases []results.CaseResult
		want  string
	}{
		{"none", []results.CaseResult{{ID: "a"}}, ""},
		{"some", []results.CaseResult{{ID: "a", IdleMs: 2.04}, {ID: "b"}, {ID: "c", IdleMs: 1678.7}},
			"\n_GPU idle between requests, waiting for the harness: `a` 2.0 ms, `c` 1.7 s._\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			idleLine(&b, &results.Result{Cases: tc.cases})
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
