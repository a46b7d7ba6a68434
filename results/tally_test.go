package results

import (
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
)

func TestTallyRequests(t *testing.T) {
	req := func(s checks.Status) checks.RequestResult { return checks.RequestResult{Status: s} }
	a := checks.Result{Cases: []checks.CaseResult{{Requests: []checks.RequestResult{req(checks.Pass), req(checks.Fail), req(checks.Skip)}}}}
	b := checks.Result{Cases: []checks.CaseResult{{Requests: []checks.RequestResult{req(checks.Error), req(checks.Known), req(checks.Cancelled),
		req("bogus"), req(checks.Flaky)}}}}
	got := TallyRequests(a, b)
	if got.Total() != 8 || got.Failed() != 3 || got[checks.Skip] != 1 || got[checks.Known] != 1 {
		t.Errorf("tally %v: total %d, failed %d; want 8 and 3 (fail, error, bogus; flaky is not a failure)", got, got.Total(), got.Failed())
	}
}
