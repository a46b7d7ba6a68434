package runner

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// defaultValidateAhead is how many of a case's requests may wait for their validation
// beside the requests in flight when Options.ValidateAhead is zero.
const defaultValidateAhead = 2

// requests is the request path of a case. Each request goes through two phases, and this is
// the one place where the first hands over to the second:
//
//   - measure (request.go) needs the server: it sends the request, waits for its complete
//     output, joins its performance.log record and closes its memory window. The case's
//     concurrency slot is released as soon as it ends, and the next request is sent.
//   - validate (validate.go) needs only the output: the output, ground-truth and repeat
//     checks, CLIP and the failure pictures. It runs beside the next request, so the server
//     never waits for the harness's decodes and SSIM.
//
// Then judge makes the request's verdict (r.judged), its growth judged against the request
// before it as measured, and the request is recorded in requests.jsonl.
//
// Validations run one at a time, in index order: request 1's first, which the repeat checks
// of the others compare with, and requests.jsonl gets the lines of a case in index order. At
// most Concurrency requests are in flight and ValidateAhead more wait for their validation;
// when that many wait, the next send waits (back pressure: no request is left unchecked).
//
// After a request that leaves the server unusable (it died, or a request hung) the server is
// stopped at once and the rest are not sent: they are recorded as skipped, which fails the
// case. On cancel, what was measured is kept: a request whose validation is still pending is
// recorded cancelled with its measurements (validationCancelled), and until then the
// results.json a cancel writes holds it so (r.hold: judged when that is written).
func (r *run) requests(ctx context.Context, c *suite.Case, srv *server, cr *results.CaseResult) []results.RequestResult {
	p := newPipeline(c.Repeat, max(c.Concurrency, 1), validateAhead(r.opts))
	for i := 1; i <= c.Repeat; i++ {
		admitted := p.admit(ctx)
		p.mu.Lock()
		why := p.halted
		p.mu.Unlock()
		if ctx.Err() == nil && why == "" {
			p.wg.Go(func() { r.requestPath(ctx, c, srv, cr, p, i) })
			continue
		}
		rr := notSent(c, i, why)
		if ctx.Err() != nil {
			rr = cancelledRequest(c, i, "run cancelled before the request was sent")
		}
		if admitted {
			<-p.slots
			<-p.unvalidated
		}
		p.measured(i, rr)
		p.wg.Go(func() { p.inTurn(i, func() { r.record(rr) }) })
	}
	p.wg.Wait()
	idle, longest := idleBetween(p.flights)
	cr.IdleMs = ms(idle)
	if c.Repeat > 1 {
		r.logf("%s: the GPU waited %s for the harness between the case's requests (longest gap %s)", c.ID, idle.Round(time.Millisecond),
			longest.Round(time.Millisecond))
	}
	return p.out
}

// requestPath is the path of request i of a case, once sent: measure, the hand-off, validate,
// judge, record.
func (r *run) requestPath(ctx context.Context, c *suite.Case, srv *server, cr *results.CaseResult, p *pipeline, i int) {
	m := r.measure(ctx, c, srv, slot{index: i, of: c.Repeat})
	p.mu.Lock()
	p.flights[i-1] = m.flight
	if m.halt != "" && p.halted == "" {
		p.halted = m.halt
	}
	// Every record repeats the load peak of its server start; keep the first one seen.
	if cr.Load != nil && !cr.Load.Reused {
		cr.Load.PeakVRAMMiB = mergePeaks(cr.Load.PeakVRAMMiB, m.starts.load)
		cr.Load.WarmupPeakVRAMMiB = mergePeaks(cr.Load.WarmupPeakVRAMMiB, m.starts.warmup)
	}
	p.mu.Unlock()
	p.measured(i, m.rr)
	<-p.slots // the hand-off: the next request may be sent
	if m.halt != "" {
		r.stopServer(srv)
	}
	prev := p.previous(i)
	r.hold(c, m, prev)
	p.inTurn(i, func() {
		rr := r.judged(c, r.val.validate(ctx, c, m), m.answered, prev)
		p.mu.Lock()
		r.disk.blame(&rr, cr)
		p.out[i-1] = rr
		var w *rewording
		if i > 1 {
			w = settle(&p.out[i-2], &rr)
		}
		p.mu.Unlock()
		r.record(rr)
		r.reword(c, w)
		r.logf("%s request %d/%d: %s  e2e %.0f ms%s", c.ID, i, c.Repeat, rr.Status, rr.E2EMs, firstProblem(rr.Checks))
	})
	<-p.unvalidated
}

// rewording is a request whose memory rise a later request told (checks.SettleGrowth), to be
// recorded again: the request reworded, its checks that changed, and why.
type rewording struct {
	rr     results.RequestResult
	checks []results.Check
	why    string
}

// settle words the memory rise of *rr by what next shows (nil: no later request measured
// it) and keeps the words in *rr; it returns what to record again (reword), nil when nothing
// changed. It only touches *rr, so a caller that guards *rr with a lock records outside it.
func settle(rr *results.RequestResult, next *results.RequestResult) *rewording {
	settled, reworded := checks.SettleGrowth(*rr, next)
	if reworded == nil {
		return nil
	}
	*rr = settled
	var why string
	switch {
	case next != nil:
		why = fmt.Sprintf("its memory rise reworded by %s: growth, or a one-off spike", next.Name())
	case rr.Confirm:
		why = "no later confirmation request measured its memory: none tells its growth from a spike"
	default:
		why = "no later request of the case measured its memory: none tells its growth from a spike"
	}
	return &rewording{rr: settled, checks: reworded, why: why}
}

// reword records a request settle reworded (none when w is nil) and says in the live log what
// its memory rise turned out to be: its log line, written when it was judged, could only say
// that it rose.
func (r *run) reword(c *suite.Case, w *rewording) {
	if w == nil {
		return
	}
	r.revise(w.rr, w.why)
	for _, ch := range w.checks {
		r.logf("%s %s: %s %s: %s", c.ID, slotOf(w.rr), ch.Name, ch.Source, ch.Cause)
	}
}

// settleRest words the memory rises of the case's requests that no later request of the case
// told: the case's last request by its first confirmation request, which is judged against
// it, when one was sent; the others, and the last without one, as a rise that no request can
// tell (the case's last, or the last measured when the rest were never sent).
func (r *run) settleRest(c *suite.Case, cr *results.CaseResult) {
	for i := range cr.Requests {
		var next *results.RequestResult
		if i == len(cr.Requests)-1 && len(cr.Confirm) > 0 {
			next = &cr.Confirm[0]
		}
		r.reword(c, settle(&cr.Requests[i], next))
	}
}

// validateAhead is Options.ValidateAhead with its default.
func validateAhead(opts Options) int {
	switch n := opts.ValidateAhead; {
	case n == 0:
		return defaultValidateAhead
	case n < 0:
		return 0
	default:
		return n
	}
}

// pipeline is the state of one case's requests: their results, when each was in flight, and
// what orders and bounds them.
type pipeline struct {
	out     []results.RequestResult // by index−1: the measurement, then the verdict (guarded by mu)
	flights []span                  // by index−1; zero for a request not sent (guarded by mu)
	// measuredAt[i] is closed once request i+1 is measured (out[i] holds its measurement), so
	// that request i+2 can be judged against it; validatedAt[i] once request i+1 is recorded.
	measuredAt, validatedAt []chan struct{}
	// slots is held from a request's send to the end of its measurement (the case's
	// concurrency); unvalidated from its send to its record (concurrency + validate ahead).
	slots, unvalidated chan struct{}

	mu     sync.Mutex
	halted string // why the rest are not sent, once a request left the server unusable
	wg     sync.WaitGroup
}

func newPipeline(n, concurrency, ahead int) *pipeline {
	p := &pipeline{out: make([]results.RequestResult, n), flights: make([]span, n),
		measuredAt: make([]chan struct{}, n), validatedAt: make([]chan struct{}, n),
		slots: make(chan struct{}, concurrency), unvalidated: make(chan struct{}, concurrency+ahead)}
	for i := range n {
		p.measuredAt[i], p.validatedAt[i] = make(chan struct{}), make(chan struct{})
	}
	return p
}

// admit waits until a request may be sent: fewer than concurrency + validate-ahead requests
// unvalidated, and a concurrency slot free. It reports whether it holds both (false: ctx
// ended first, and it holds neither).
func (p *pipeline) admit(ctx context.Context) bool {
	select {
	case p.unvalidated <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	select {
	case p.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		<-p.unvalidated
		return false
	}
}

// measured keeps request i's measurement and lets request i+1 be judged against it.
func (p *pipeline) measured(i int, rr results.RequestResult) {
	p.mu.Lock()
	p.out[i-1] = rr
	p.mu.Unlock()
	close(p.measuredAt[i-1])
}

// previous is the request before request i as measured (nil for request 1), once it is.
func (p *pipeline) previous(i int) *results.RequestResult {
	if i == 1 {
		return nil
	}
	<-p.measuredAt[i-2]
	p.mu.Lock()
	defer p.mu.Unlock()
	prev := p.out[i-2]
	return &prev
}

// inTurn runs request i's validation and record once request i−1's are done.
func (p *pipeline) inTurn(i int, f func()) {
	if i > 1 {
		<-p.validatedAt[i-2]
	}
	f()
	close(p.validatedAt[i-1])
}

// idleBetween is how long no request was in flight between the first send and the last
// answer of flights (zero ones were not sent): the time the harness kept the GPU waiting,
// and the longest such gap.
func idleBetween(flights []span) (total, longest time.Duration) {
	var sent []span
	for _, f := range flights {
		if !f.from.IsZero() {
			sent = append(sent, f)
		}
	}
	slices.SortFunc(sent, func(a, b span) int { return a.from.Compare(b.from) })
	var end time.Time
	for k, f := range sent {
		if gap := f.from.Sub(end); k > 0 && gap > 0 {
			total += gap
			longest = max(longest, gap)
		}
		if f.to.After(end) {
			end = f.to
		}
	}
	return total, longest
}
