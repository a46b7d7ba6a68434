package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/metrics"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// dynamicBatching runs the case's dynamic-batching smoke (suite.DynamicBatching) once, after
// its requests and API checks, as SGLang's harness runs it last (test_server_common.py
// _test_dynamic_batching_smoke): the two requests alone, one after the other, as references;
// then, watching the server log from there, both at once; then the images compared and the
// log read. Its outputs stay in the case's batching/ folder. The verdict is
// checks.DynamicBatching. nil when the case has none, and in gt mode, where SGLang writes the
// ground truth and stops.
func (r *run) dynamicBatching(ctx context.Context, c *suite.Case, srv *server) *results.Check {
	b := c.Batching
	if b == nil || r.opts.Mode == ModeGT {
		return nil
	}
	dir, err := r.rec.BatchingArtifactDir(c.ID)
	if err != nil {
		r.disk.note(err)
		return &results.Check{Name: checks.BatchingDynamic, Status: results.Error, Detail: err.Error()}
	}
	var e checks.BatchEvidence
	var refs, batched [2]batchOutput
	for i := range refs {
		refs[i] = r.batchRequest(ctx, c, srv, i, "reference", dir)
		e.References = append(e.References, refs[i].BatchAnswer)
		if refs[i].Failed != "" {
			break
		}
	}
	if len(e.References) == len(refs) && refs[1].Failed == "" {
		watch := srv.log.seek(checks.BatchFailedMarker, checks.BatchDispatchMarker, checks.BatchProcessedMarker)
		batched = r.batchPair(ctx, c, srv, dir)
		e.Batched = []checks.BatchAnswer{batched[0].BatchAnswer, batched[1].BatchAnswer}
		if batched[0].Failed == "" && batched[1].Failed == "" {
			e.Own, e.Cross, e.DistanceFailed = r.batchDistances(ctx, refs, batched)
			r.batchLog(ctx, srv, watch, b.LogTimeout, &e)
		}
		srv.log.unseek(watch)
	}
	if ctx.Err() != nil {
		e.Halt = "the run was cancelled"
	} else if why := srv.dead(); why != "" {
		e.Halt = why
	}
	ck := checks.DynamicBatching(e, ctx.Err() != nil)
	r.logf("%s: %s: %s%s", c.ID, ck.Name, ck.Status, firstProblem([]results.Check{ck}))
	return &ck
}

// batchOutput is one request of the smoke: its answer, and its image's path.
type batchOutput struct {
	checks.BatchAnswer
	path string
}

// batchRequest sends the smoke's request i alone, as SGLang's generate_image_response does
// (one image, b64_json), into dir/<what>-<i+1>/, and checks its answer as SGLang does: one
// image of the requested format and size, with an id.
func (r *run) batchRequest(ctx context.Context, c *suite.Case, srv *server, i int, what, dir string) (out batchOutput) {
	bc := *c
	bc.Request = c.Batching.Requests[i]
	bc.Request.N = 1
	bc.Checks = suite.Toggles{}
	sub := filepath.Join(dir, fmt.Sprintf("%s-%d", what, i+1))
	if err := os.MkdirAll(sub, 0o755); err != nil {
		out.Failed = fmt.Sprintf("its output folder: %v", err)
		return out
	}
	at := slot{index: i + 1, of: len(c.Batching.Requests)}
	rep, _, timedOut, err := r.send(ctx, &bc, srv, at, sub, c.Batching.Timeout)
	out.ID = rep.ID
	switch {
	case err != nil && timedOut:
		out.Failed = fmt.Sprintf("no complete output within the smoke's request timeout of %s", c.Batching.Timeout)
		return out
	case err != nil:
		srv.settle(settleTime)
		out.Failed = err.Error()
		if why := srv.dead(); why != "" {
			out.Failed = fmt.Sprintf("%s (%v)", why, err)
		}
		return out
	}
	rr := results.RequestResult{Case: c.ID, Index: at.index, Of: at.of}
	if out.Failed = r.val.outputProblem(ctx, &bc, rep, sub, &rr); out.Failed != "" {
		return out
	}
	out.path = rep.Files[0].Path
	sum, err := fileSHA256(out.path)
	if err != nil {
		out.Failed = fmt.Sprintf("its image: %v", err)
	}
	out.SHA256 = sum
	return out
}

// batchPair sends the smoke's two requests at once: both are released together, so that they
// share one admission window of the server's scheduler.
func (r *run) batchPair(ctx context.Context, c *suite.Case, srv *server, dir string) (out [2]batchOutput) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[i] = r.batchRequest(ctx, c, srv, i, "batched", dir)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// batchDistances is the mean absolute RGB difference of each batched image against its own
// reference and against the other one (SGLang's image_distance), or why it could not be
// computed.
func (r *run) batchDistances(ctx context.Context, refs, batched [2]batchOutput) (own, cross []float64, failed string) {
	decode := func(o batchOutput) (rgb []byte, shape string, err error) {
		rgb, w, h, err := r.val.cons.helpers.Tools.DecodeImage(ctx, o.path)
		return rgb, fmt.Sprintf("%dx%d", w, h), err
	}
	var refRGB, outRGB [2][]byte
	var refShape, outShape [2]string
	for i := range 2 {
		var err error
		if refRGB[i], refShape[i], err = decode(refs[i]); err != nil {
			return nil, nil, err.Error()
		}
		if outRGB[i], outShape[i], err = decode(batched[i]); err != nil {
			return nil, nil, err.Error()
		}
	}
	for i := range 2 {
		for _, ref := range []int{i, 1 - i} {
			if refShape[ref] != outShape[i] {
				return nil, nil, fmt.Sprintf("reference %d and batched output %d have different shapes: %s vs %s", ref+1, i+1, refShape[ref], outShape[i])
			}
		}
		own = append(own, metrics.MeanAbsDiff(outRGB[i], refRGB[i]))
		cross = append(cross, metrics.MeanAbsDiff(outRGB[i], refRGB[1-i]))
	}
	return own, cross, ""
}

// batchLog waits up to limit for the watch to see both markers or a failure line, or for the
// server to end or the run to be cancelled, and records what the log showed.
func (r *run) batchLog(ctx context.Context, srv *server, watch *logSeek, limit time.Duration, e *checks.BatchEvidence) {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-watch.done:
	case <-t.C:
	case <-srv.exited:
		return // the caller's halt says why
	case <-ctx.Done():
		return
	}
	e.LogRead, e.LogWait = true, limit.String()
	e.Missing, e.FailedLine = srv.log.unseek(watch)
}

// fileSHA256 is the hex SHA-256 of a file's bytes.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close() //nolint:errcheck // read only
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
