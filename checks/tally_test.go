package checks

import "testing"

func TestTallyRequests(t *testing.T) {
	req := func(s Status) RequestResult { return RequestResult{Status: s} }
	a := Result{Cases: []CaseResult{{Requests: []RequestResult{req(Pass), req(Fail), req(Skip)}}}}
	b := Result{Cases: []CaseResult{{Requests: []RequestResult{req(Error), req(Known), req(Cancelled), req("bogus"), req(Flaky)}}}}
	got := TallyRequests(a, b)
	if got.Total() != 8 || got.Failed() != 3 || got[Skip] != 1 || got[Known] != 1 {
		t.Errorf("tally %v: total %d, failed %d; want 8 and 3 (fail, error, bogus; flaky is not a failure)", got, got.Total(), got.Failed())
	}
}
