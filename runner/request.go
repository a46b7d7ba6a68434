package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// prober reads what a media file holds.
type prober func(ctx context.Context, path string) (media.Info, error)

// settleTime is how long a failed request waits for a dying server to finish exiting, so that
// the failure is attributed to the crash rather than to a reset connection.
const settleTime = 500 * time.Millisecond

// startPeaks are the peaks of a server start that the server reports with each request: its
// load peak and its warm-up peak (nil when not reported).
type startPeaks struct{ load, warmup map[string]float64 }

// slot names one request of a case: one of its Repeat requests, or a confirmation request
// (confirm set), each 1-based index of of.
type slot struct {
	index, of int
	confirm   bool
	warmup    bool // an unmeasured warm-up request (warmup.go)
}

// slotOf is the slot of a measured request.
func slotOf(rr results.RequestResult) slot {
	return slot{index: rr.Index, of: rr.Of, confirm: rr.Confirm}
}

// String is how progress lines and messages name the request: "request 2/3",
// "confirmation request 1/2", "warm-up request 1/1".
func (s slot) String() string {
	if s.confirm {
		return fmt.Sprintf("confirmation request %d/%d", s.index, s.of)
	}
	if s.warmup {
		return fmt.Sprintf("warm-up request %d/%d", s.index, s.of)
	}
	return fmt.Sprintf("request %d/%d", s.index, s.of)
}

// measured is one request as its measure phase left it, before its validation (validate.go)
// and its judgement (judge.Input): the result with the checks of its sending (the server
// alive, a hang, a failed request), the checks of what the server reported of it (its perf
// record, the memory sampler's note: requests.jsonl lists them after validation's), the reply
// whose output files (in dir) validation checks, the server start it ran on, when it was in
// flight, the peaks of the server start the server reported with it, whether the server
// answered with an output (its timings are then judged) and, when the server can no longer be
// used, why.
type measured struct {
	rr       results.RequestResult
	reported []results.Check
	rep      reply
	dir      string
	srv      *server
	flight   span
	starts   startPeaks
	answered bool
	halt     string
}

// unvalidated is the request as measured, with no validation: its sending's checks, then
// what the server reported.
func (m measured) unvalidated() results.RequestResult {
	rr := m.rr
	rr.Checks = slices.Concat(m.rr.Checks, m.reported)
	return rr
}

// measure is the first phase of a request, everything that needs the server: it sends the
// request, waits for its complete output, closes its memory window and joins its
// performance.log record, making the checks of that (server alive, a hang, a failed request,
// perf record). It decodes nothing: the output is checked by validate, beside the next
// request.
func (r *run) measure(ctx context.Context, c *suite.Case, srv *server, at slot) (m measured) {
	m.rr = results.RequestResult{Case: c.ID, Index: at.index, Of: at.of, Confirm: at.confirm, StartedAt: time.Now().UTC()}
	m.srv = srv
	dir, err := r.rec.ArtifactDir(c.ID, at.index, at.confirm)
	if err != nil {
		r.disk.note(err)
		m.rr.Checks = append(m.rr.Checks, results.Check{Name: results.OutputPresent, Status: results.Error, Detail: err.Error()})
		return m
	}
	m.dir = dir
	timeout := r.opts.Suite.Servers[c.Server].RequestTimeout
	if c.Timeout > 0 {
		timeout = c.Timeout
	}
	if err := r.firstFrame(ctx, c, &m.rr); err != nil {
		r.notSent(ctx, &m, err)
		return m
	}
	mem := srv.openRequestMemory()
	rep, flight, timedOut, err := r.send(ctx, c, srv, at, dir, timeout)
	m.flight = flight
	m.rr.E2EMs = ms(flight.to.Sub(flight.from))
	mem.end()
	defer func() { m.reported = append(m.reported, mem.record(&m.rr)...) }() // after joinPerf, beside the server's own numbers
	m.rep = rep
	m.rr.RequestID = rep.ID
	m.rr.RealtimeChunks = rep.Chunks
	if err != nil {
		r.unanswered(ctx, c, srv, at, &m, err, timedOut, timeout)
	} else {
		r.answered(ctx, c, srv, at, &m)
	}
	r.loraChecks(ctx, c, srv, at, &m)
	return m
}

// send sends the request and waits for its complete output, saved in dir. timedOut tells a
// request that hung from one the run's cancel ended.
func (r *run) send(
	ctx context.Context,
	c *suite.Case,
	srv *server,
	at slot,
	dir string,
	timeout time.Duration,
) (rep reply, flight span, timedOut bool, err error) {
	spec := r.opts.Suite.Servers[c.Server]
	model := spec.Model
	if model == "" && c.Modality == suite.Text {
		model = expectedModel(c, spec).ID // SGLang's chat smoke names the model path
	}
	cl := &client{http: r.opts.HTTPClient, base: srv.baseURL, model: model, poll: spec.PollInterval,
		dir: dir, maxBytes: int64(spec.MaxOutputMB) << 20, inputs: r.inputs, tools: r.opts.Tools}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stopBeat := r.beat(fmt.Sprintf("%s %s: waiting", c.ID, at), timeout, func() string { return requestStatus(cl, srv) })
	rep, t0, err := srv.generate(rctx, cl, c)
	stopBeat()
	return rep, span{from: t0, to: time.Now()}, errors.Is(rctx.Err(), context.DeadlineExceeded), err
}

// unanswered makes the checks of a request that got no output (err): the server may be
// unusable after it (a cancel, a crash, a hang), or the request alone failed, and then its
// perf record is still joined when the generation may have run.
func (r *run) unanswered(ctx context.Context, c *suite.Case, srv *server, at slot, m *measured, err error, timedOut bool, timeout time.Duration) {
	rr := &m.rr
	if ctx.Err() != nil {
		rr.Status = results.Cancelled
		rr.Checks = append(rr.Checks, results.Check{Name: results.ServerAlive, Status: results.Cancelled,
			Detail: fmt.Sprintf("run cancelled after %.0f ms, before the output arrived", rr.E2EMs)})
		m.halt = "run cancelled"
		return
	}
	srv.settle(settleTime)
	if why := srv.dead(); why != "" {
		detail := fmt.Sprintf("%s while the request was in flight (%v)", why, err)
		rr.Checks = append(rr.Checks,
			results.Check{Name: results.ServerAlive, Status: results.Fail, Detail: withTail(detail, srv), Cause: srv.crashCause("server crashed")})
		saveTail(m.dir, srv)
		m.halt = fmt.Sprintf("not sent: the server died during %s", at)
		return
	}
	rr.Checks = append(rr.Checks, results.Check{Name: results.ServerAlive, Status: results.Pass})
	if timedOut && c.Modality != suite.Image && baselines.ROCm(r.opts.GPU) {
		rr.Checks = append(rr.Checks, checks.AMDVideoTimeout(c.ID, timeout))
		saveTail(m.dir, srv)
		m.halt = fmt.Sprintf("not sent: %s", checks.AMDVideoTimeoutCause)
		return
	}
	if timedOut {
		rr.Checks = append(rr.Checks, results.Check{Name: results.OutputPresent, Status: results.Fail,
			Detail: fmt.Sprintf("no complete output within the request timeout of %s (server alive but not answering)", timeout),
			Cause:  fmt.Sprintf("request hung: no output within %s", timeout)})
		saveTail(m.dir, srv)
		m.halt = fmt.Sprintf("not sent: the server was stopped after %s hung", at)
		return
	}
	r.failedRequest(ctx, c, srv, m, err)
}

// notSent makes the checks of a request that failed before anything went to the server (its
// realtime first frame could not be fetched): output.present fails saying why, or the
// request is cancelled with the run. The server is not blamed, and no perf record is waited
// for: nothing ran.
func (r *run) notSent(ctx context.Context, m *measured, err error) {
	if ctx.Err() != nil {
		m.rr.Status = results.Cancelled
		m.rr.Checks = append(m.rr.Checks, results.Check{Name: results.OutputPresent, Status: results.Cancelled,
			Detail: fmt.Sprintf("run cancelled before the request was sent (%v)", err)})
		m.halt = "run cancelled"
		return
	}
	m.rr.Checks = append(m.rr.Checks, results.Check{Name: results.OutputPresent, Status: results.Fail, Detail: err.Error(),
		Cause: "first frame not fetched"})
}

// failedRequest makes the checks of a request that failed while the server stayed usable.
func (r *run) failedRequest(ctx context.Context, c *suite.Case, srv *server, m *measured, err error) {
	st := results.Fail
	var se *saveError
	if errors.As(err, &se) {
		st = results.Error // the output arrived; this machine could not keep it
		r.disk.note(err)
	}
	m.rr.Checks = append(m.rr.Checks, results.Check{Name: results.OutputPresent, Status: st, Detail: err.Error()})
	saveTail(m.dir, srv)
	switch {
	case failedOnServer(err):
		// SGLang writes no performance.log record for a request it reports failed
		// (gpu_worker._execute_forward_common): waiting for one would only add
		// perf_record_timeout and a second failure to the one above.
		m.rr.Checks = append(m.rr.Checks, results.Check{Name: results.PerfRecord, Status: results.Skip,
			Detail: "not joined: the server reported this request failed, and SGLang writes no performance.log record for a failed request"})
	case m.rep.ID != "":
		// The generation may have run (a failed download, a full disk): its record may be there.
		r.joinPerf(ctx, c, srv, m)
	}
}

// answered makes the checks of a request the server answered with an output: the server
// alive after it and its perf record joined.
func (r *run) answered(ctx context.Context, c *suite.Case, srv *server, at slot, m *measured) {
	m.answered = true
	if why := srv.dead(); why != "" {
		m.rr.Checks = append(m.rr.Checks, results.Check{Name: results.ServerAlive, Status: results.Fail,
			Detail: withTail(fmt.Sprintf("answered, but then %s", why), srv), Cause: srv.crashCause("server crashed after answering")})
		m.halt = fmt.Sprintf("not sent: the server died after %s", at)
		return
	}
	m.rr.Checks = append(m.rr.Checks, results.Check{Name: results.ServerAlive, Status: results.Pass})
	r.joinPerf(ctx, c, srv, m)
}

// span is when a request was in flight: from its send to its complete output (or failure).
type span struct{ from, to time.Time }

// joinPerf waits for the request's performance.log record, copies its timings and peaks into
// m and makes its check (m.reported).
func (r *run) joinPerf(ctx context.Context, c *suite.Case, srv *server, m *measured) {
	spec := r.opts.Suite.Servers[c.Server]
	rr := &m.rr
	check := func(ck results.Check) { m.reported = append(m.reported, ck) }
	if c.Modality == suite.Text {
		return // a text generation has no diffusion perf record (SGLang's chat smoke reads none)
	}
	if !suite.Enabled(c.Checks.PerfRecord) {
		check(results.Check{Name: results.PerfRecord, Status: results.Skip, Detail: "disabled by the case's checks.perf_record"})
		return
	}
	if rr.RequestID == "" {
		check(results.Check{Name: results.PerfRecord, Status: results.Fail, Detail: "the response carries no id to join performance.log on"})
		return
	}
	// On a full disk the server cannot write its record either: neither wait for it (from
	// the start, or once the disk fills up) nor call its absence the server's failure.
	noRecord := func(derr error) {
		check(results.Check{Name: results.PerfRecord, Status: results.Error,
			Detail: fmt.Sprintf("not waited for: the disk is full (%v), so the server cannot write its performance.log record", derr)})
	}
	if derr := r.disk.err(); derr != nil {
		noRecord(derr)
		return
	}
	wctx, stop := r.disk.until(ctx)
	rec, err := srv.perf.Wait(wctx, rr.RequestID, spec.PerfRecordTimeout)
	stop()
	if err != nil {
		st := results.Fail
		switch derr := r.disk.err(); {
		case ctx.Err() != nil:
			st = results.Cancelled
		case derr != nil:
			noRecord(derr)
			return
		}
		check(results.Check{Name: results.PerfRecord, Status: st, Detail: err.Error()})
		return
	}
	rr.Stages = rec.StageTimes()
	rr.StepsMs = rec.Steps
	rr.ServerTotalMs = rec.TotalDurationMs
	rr.PeakVRAMMiB = rec.Peaks("runtime_peak")
	check(checks.PerfRecordJoined(rec.TotalDurationMs, len(rec.Stages), len(rec.Steps), rec.Impossible()))
	m.starts = startPeaks{load: rec.Peaks("load_peak"), warmup: rec.Peaks("warmup_peak")}
}

// withTail appends the server's last log lines to a failure detail.
func withTail(detail string, srv *server) string {
	tail := srv.log.lastLines(8)
	if len(tail) == 0 {
		return detail
	}
	return detail + "\nlast server log lines:\n" + strings.Join(tail, "\n")
}

// saveTail keeps the server log tail beside the request's artifacts; best effort, since the
// same lines are also in the check detail and the full log is in the servers folder.
func saveTail(dir string, srv *server) {
	tail := srv.log.lastLines(tailLines)
	_ = os.WriteFile(filepath.Join(dir, "server-log-tail.txt"), []byte(strings.Join(tail, "\n")+"\n"), 0o644)
}
