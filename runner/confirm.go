package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/runner/suite"
)

// confirm sends a case's confirmation requests (its confirm: K) when a perf or memory check
// failed on one of its requests, and labels each such failure with what they said
// (checks.LabelConfirmed): one at a time, to the same warm server, with the same request
// body, each recorded in requests.jsonl as it finishes. It stops early once every failed
// check has failed again (more requests could not change a label), when the server dies or
// hangs, or on cancel. The verdicts of the case's own requests are never changed, except that
// on_unconfirmed: flaky turns a failure that was not reproduced into flaky.
//
// Known failures are not confirmed: an entry of the known-failures file already explains
// them (an expired entry does not, and its failure is confirmed).
func (r *run) confirm(ctx context.Context, c *suite.Case, srv *server, cr *checks.CaseResult) {
	k := c.Noise.Confirm
	if k == 0 {
		return
	}
	targets := checks.ConfirmTargets(cr.Requests, r.knownCovers(c.ID))
	if len(targets) == 0 {
		return
	}
	r.logf("%s: a perf or memory check failed; sending up to %d confirmation request(s)", c.ID, k)
	var note string
	for i := 1; i <= k; i++ {
		if ctx.Err() != nil {
			note = fmt.Sprintf("run cancelled before confirmation request %d/%d", i, k)
			break
		}
		if why := srv.dead(); why != "" {
			note = fmt.Sprintf("not sent from confirmation request %d/%d on: %s", i, k, why)
			break
		}
		at := slot{index: i, of: k, confirm: true}
		rr, _, halt := r.request(ctx, c, srv, at)
		r.confirmMemory(c, cr, &rr)
		if rr.Status != checks.Cancelled {
			rr.Status = checks.RequestStatus(rr.Checks)
		}
		cr.Confirm = append(cr.Confirm, rr)
		r.record(rr)
		r.logf("%s %s: %s  e2e %.0f ms%s", c.ID, at, rr.Status, rr.E2EMs, firstProblem(rr.Checks))
		if halt != "" {
			r.stopServer(srv)
			note = strings.TrimPrefix(halt, "not sent: ")
			if i < k {
				note = fmt.Sprintf("stopped after %d of %d: %s", i, k, note)
			}
			break
		}
		if i < k && checks.Reproduced(targets, cr.Confirm) {
			note = fmt.Sprintf("stopped after %d of %d: every failed check failed again", i, k)
			break
		}
	}
	flaky := c.Noise.OnUnconfirmed == suite.OnUnconfirmedFlaky
	labelled, flakies := checks.LabelConfirmed(cr.Requests, targets, cr.Confirm, k, note, flaky)
	msg := fmt.Sprintf("%s: %d confirmation request(s) labelled %d failed check(s)", c.ID, len(cr.Confirm), labelled)
	if flakies > 0 {
		msg += fmt.Sprintf(", %d not reproduced: flaky (on_unconfirmed: flaky)", flakies)
	}
	if note != "" {
		msg += " (" + note + ")"
	}
	r.logf("%s", msg)
}

// knownCovers reports, for a case, whether a known-failures entry that has not expired
// covers a check of request req: such a failure is reported as known whatever
// confirmation would say.
func (r *run) knownCovers(caseID string) func(req int, c checks.Check) bool {
	p := r.perfCfg
	if p == nil || len(p.known) == 0 {
		return nil
	}
	return func(req int, c checks.Check) bool {
		return checks.KnownCovers(p.known, caseID, req, c.Name, p.today)
	}
}

// confirmMemory makes the memory checks of a confirmation request that the case's own
// requests get from casePerf: its runtime peaks against the baseline, and growth since the
// request before it (the case's last request, or the previous confirmation request), so
// that a leak is reproduced, not mistaken for noise.
func (r *run) confirmMemory(c *suite.Case, cr *checks.CaseResult, rr *checks.RequestResult) {
	p := r.perfCfg
	if p == nil || !suite.Enabled(c.Checks.Memory) {
		return
	}
	mb := r.memoryBaseline(c)
	if p.rocm {
		if p.collecting() && len(rr.PeakVRAMMiB) > 0 {
			rr.Checks = append(rr.Checks, checks.Unenforced(checks.RuntimeMemory(rr.PeakVRAMMiB, mb), checks.NoVRAMVerdict)...)
		}
		return
	}
	if p.collecting() && (len(rr.PeakVRAMMiB) > 0 || perfRecorded(rr)) {
		rr.Checks = append(rr.Checks, p.finish(p.withSpread(c.ID, checks.RuntimeMemory(rr.PeakVRAMMiB, mb)))...)
	}
	if prev, name := lastRequest(cr); prev != nil {
		checks.GrowthSince(prev, rr, name, mb.RuntimeTol)
	}
}

// lastRequest is the request a new confirmation request follows: the last confirmation
// request, else the case's request with the highest index; and how to name it.
func lastRequest(cr *checks.CaseResult) (*checks.RequestResult, string) {
	if n := len(cr.Confirm); n > 0 {
		return &cr.Confirm[n-1], fmt.Sprintf("confirmation request %d", cr.Confirm[n-1].Index)
	}
	var last *checks.RequestResult
	for i := range cr.Requests {
		if last == nil || cr.Requests[i].Index > last.Index {
			last = &cr.Requests[i]
		}
	}
	if last == nil {
		return nil, ""
	}
	return last, fmt.Sprintf("request %d", last.Index)
}
