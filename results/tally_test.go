package results_test

import (
	"testing"

	"github.com/diffusion-check/diffusion-check/results"
)

func TestTallyRequests(t *testing.T) {
	req := func(s results.Status) results.RequestResult { return results.RequestResult{Status: s} }
	a := results.Result{Cases: []results.CaseResult{{Requests: []results.RequestResult{req(results.Pass), req(results.Fail), req(results.Skip)}}}}
	b := results.Result{Cases: []results.CaseResult{{Requests: []results.RequestResult{req(results.Error), req(results.Known), req(results.Cancelled),
		req("bogus"), req(results.Flaky)}}}}
	got := results.TallyRequests(a, b)
	if got.Total() != 8 || got.Failed() != 3 || got[results.Skip] != 1 || got[results.Known] != 1 {
		t.Errorf("tally %v: total %d, failed %d; want 8 and 3 (fail, error, bogus; flaky is not a failure)", got, got.Total(), got.Failed())
	}
}
