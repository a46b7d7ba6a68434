package judge

import (
	"fmt"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// Confirmed is what a case's confirmation requests made of its requests.
type Confirmed struct {
	// Requests are the case's requests with their failed perf and memory checks labelled
	// (checks.LabelConfirmed) and their statuses recomputed.
	Requests []results.RequestResult
	// Revisions are the requests whose checks the labels changed, and what changed.
	Revisions []Revision
	// Labelled counts the checks labelled; Flaky those that became flaky.
	Labelled, Flaky int
}

// Revision is one request that a later event changed after it was written.
type Revision struct {
	At   int    // its position in Confirmed.Requests
	What string // what changed, for its revised line in requests.jsonl
}

// Confirmation is the case step that follows a case's confirmation requests (confirm, in the
// order sent; note says why they stopped short, if they did): every target check
// (checks.ConfirmTargets) of the case's requests gets the label of what they said, and with
// on_unconfirmed: flaky one that was not reproduced becomes flaky. reqs is not changed.
func Confirmation(c *suite.Case, reqs []results.RequestResult, targets map[string]bool, confirm []results.RequestResult, note string) Confirmed {
	flaky := c.Noise.OnUnconfirmed == suite.OnUnconfirmedFlaky
	out, labelled, flakies := checks.LabelConfirmed(reqs, targets, confirm, c.Noise.Confirm, note, flaky)
	res := Confirmed{Requests: out, Labelled: labelled, Flaky: flakies}
	for i := range out {
		if out[i].Status != results.Cancelled {
			out[i].Status = RequestStatus(out[i].Checks)
		}
		if what := changes(reqs[i], out[i]); what != "" {
			res.Revisions = append(res.Revisions, Revision{At: i, What: what})
		}
	}
	return res
}

// changes says how a request's labelled checks and status differ from before: "confirmation:
// perf.e2e reproduced in 2/2 confirmation requests; status fail → flaky". "" when nothing
// changed.
func changes(before, after results.RequestResult) string {
	var what []string
	for j, c := range after.Checks {
		if c.Confirm == nil || j >= len(before.Checks) || before.Checks[j].Confirm != nil {
			continue
		}
		name := c.Name
		if c.Source != "" {
			name += " (" + c.Source + ")"
		}
		s := name + " " + c.Confirm.Text()
		if was := before.Checks[j].Status; was != c.Status {
			s += fmt.Sprintf(": %s → %s", was, c.Status)
		}
		what = append(what, s)
	}
	if len(what) == 0 {
		return ""
	}
	s := "confirmation: " + strings.Join(what, "; ")
	if before.Status != after.Status {
		s += fmt.Sprintf("; status %s → %s", before.Status, after.Status)
	}
	return s
}
