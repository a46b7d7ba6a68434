package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// confirm sends a case's confirmation requests (its confirm: K) when a perf or memory check
// failed on one of its requests, and labels each such failure with what they said
// (judge.Confirmation): one at a time, to the same warm server, with the same request body,
// each judged like any request (its growth against the request before it) and recorded in
// requests.jsonl as it finishes. It stops early once every failed check has failed again
// (more requests could not change a label), when the server dies or hangs, or on cancel. A
// request whose checks the labels changed is recorded again, saying what changed.
//
// Known failures are not confirmed: an entry of the known-failures file already explains
// them, and they are known by now (an expired entry does not, and its failure is confirmed).
func (r *run) confirm(ctx context.Context, c *suite.Case, srv *server, cr *results.CaseResult) {
	k := c.Noise.Confirm
	if k == 0 {
		return
	}
	targets := checks.ConfirmTargets(cr.Requests)
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
		m := r.measure(ctx, c, srv, at)
		rr := r.judged(c, r.val.validate(ctx, c, m), m.answered, lastRequest(cr))
		cr.Confirm = append(cr.Confirm, rr)
		r.record(rr)
		if i > 1 {
			r.reword(c, settle(&cr.Confirm[i-2], &rr))
		}
		r.logf("%s %s: %s  e2e %.0f ms%s", c.ID, at, rr.Status, rr.E2EMs, firstProblem(rr.Checks))
		if m.halt != "" {
			r.stopServer(srv)
			note = strings.TrimPrefix(m.halt, "not sent: ")
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
	if n := len(cr.Confirm); n > 0 {
		r.reword(c, settle(&cr.Confirm[n-1], nil))
	}
	conf := judge.Confirmation(c, cr.Requests, targets, cr.Confirm, note)
	cr.Requests = conf.Requests
	for _, rev := range conf.Revisions {
		r.revise(cr.Requests[rev.At], rev.What)
	}
	labelled, flakies := conf.Labelled, conf.Flaky
	msg := fmt.Sprintf("%s: %d confirmation request(s) labelled %d failed check(s)", c.ID, len(cr.Confirm), labelled)
	if flakies > 0 {
		msg += fmt.Sprintf(", %d not reproduced: flaky (on_unconfirmed: flaky)", flakies)
	}
	if note != "" {
		msg += " (" + note + ")"
	}
	r.logf("%s", msg)
}

// lastRequest is the request a new confirmation request follows: the last confirmation
// request, else the case's request with the highest index.
func lastRequest(cr *results.CaseResult) *results.RequestResult {
	if n := len(cr.Confirm); n > 0 {
		return &cr.Confirm[n-1]
	}
	var last *results.RequestResult
	for i := range cr.Requests {
		if last == nil || cr.Requests[i].Index > last.Index {
			last = &cr.Requests[i]
		}
	}
	return last
}
