package refserver

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The reference server's dynamic batching, as SGLang's scheduler does it with
// --batching-max-size above 1 (runtime/managers/scheduler.py, pandalee99/sglang @ cce0a1244,
// 2026-08-23): image requests wait in one queue; the scheduler takes the oldest with the
// compatible ones behind it, up to the batch size, and runs them at once, or waits up to
// --batching-delay-ms for a fuller batch. Requests are compatible when everything but their
// prompt and seed matches and neither has input images (_can_dynamic_batch). One batch runs
// at a time, as on one GPU. Each request of a batch gets the output it would get alone.
//
// It logs the lines SGLang's smoke reads (test_server_common.py
// _test_dynamic_batching_smoke, newer than cce0a1244): "Dynamic batch dispatch: size=N/M,
// user_max=M, ..." when a batch is taken (cce0a1244 words it "requests=N, outputs=N/M,
// user_max_outputs=M" and only with --enable-batching-metrics; the smoke's words are the
// newer server's) and "Processed dynamic batch of N/M request(s) with max_delay=Dms" after a
// merged batch ran. Faults: batch-unmerged runs every request alone, batch-swapped hands a
// merged pair each other's output, batch-split-fails fails a merged batch as SGLang does when
// it cannot split the merged output.

// errBatchSplit is the error of every request of a merged batch under batch-split-fails:
// SGLang's error_msg when _split_batched_output fails.
var errBatchSplit = errors.New("Dynamic batching failed: could not split merged output.") //nolint:revive,staticcheck // SGLang's message, verbatim

// batcher queues the image requests of a server with dynamic batching.
type batcher struct {
	h     *Handler
	max   int
	delay time.Duration
	mu    sync.Mutex
	queue []*queued
	wake  chan struct{} // a request arrived
}

// queued is one request waiting for its batch, and what became of it.
type queued struct {
	ctx  context.Context
	rn   run
	at   time.Time
	done chan struct{} // closed when out and err are set
	out  *outcome
	err  error
}

// newBatcher starts h's scheduler; nil when h merges nothing.
func newBatcher(h *Handler) *batcher {
	if h.cfg.BatchingMaxSize <= 1 {
		return nil
	}
	b := &batcher{h: h, max: h.cfg.BatchingMaxSize, delay: time.Duration(h.cfg.BatchingDelayMs * float64(time.Millisecond)), wake: make(chan struct{}, 1)}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		b.schedule()
	}()
	return b
}

// generate queues rn and waits for its batch to run it; a request whose client goes away is
// still run with its batch, as a queued SGLang request is, and its outcome dropped.
func (b *batcher) generate(ctx context.Context, rn run) (*outcome, error) {
	q := &queued{ctx: ctx, rn: rn, at: time.Now(), done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, q)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
	select {
	case <-q.done:
		return q.out, q.err
	case <-b.h.ctx.Done():
		return nil, b.h.ctx.Err()
	}
}

// schedule takes batches off the queue and runs them, one at a time, until the server closes.
func (b *batcher) schedule() {
	for {
		batch, wait := b.take()
		if batch != nil {
			b.run(batch)
			continue
		}
		var timer <-chan time.Time
		var t *time.Timer
		if wait > 0 {
			t = time.NewTimer(wait)
			timer = t.C
		}
		select {
		case <-b.wake:
		case <-timer:
		case <-b.h.ctx.Done():
			b.fail(b.h.ctx.Err())
			return
		}
		if t != nil {
			t.Stop()
		}
	}
}

// take removes the next batch from the queue: the oldest request and the compatible ones
// behind it, up to the batch size, when the batch is full or the oldest has waited the
// delay. Otherwise it returns how long to wait for the delay (0: for the next request).
func (b *batcher) take() (batch []*queued, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.queue) == 0 {
		return nil, 0
	}
	head := b.queue[0]
	picked := []int{0}
	for i := 1; i < len(b.queue) && len(picked) < b.max && !b.h.cfg.Faults.BatchUnmerged; i++ {
		if mergeable(head.rn.req, b.queue[i].rn.req) {
			picked = append(picked, i)
		}
	}
	waited := time.Since(head.at)
	if len(picked) < b.max && waited < b.delay && batchable(head.rn.req) && !b.h.cfg.Faults.BatchUnmerged {
		return nil, b.delay - waited
	}
	reason := "delay"
	if len(picked) == b.max {
		reason = "max_size"
	}
	for k := len(picked) - 1; k >= 0; k-- {
		batch = append([]*queued{b.queue[picked[k]]}, batch...)
		b.queue = append(b.queue[:picked[k]], b.queue[picked[k]+1:]...)
	}
	b.h.logf("INFO", "Dynamic batch dispatch: size=%d/%d, user_max=%d, queue_wait=%.2fms, stop_reason=%s",
		len(batch), b.max, b.max, float64(waited)/float64(time.Millisecond), reason)
	return batch, 0
}

// mergeable reports whether b can join a's batch: SGLang merges requests that differ only in
// their prompt and seed, and none with input images.
func mergeable(a, b *genRequest) bool {
	return batchable(a) && batchable(b) && a.kind == b.kind && a.w == b.w && a.h == b.h && a.n == b.n &&
		a.format == b.format && a.steps == b.steps && a.thinks == b.thinks
}

// batchable reports whether g can be merged with another request at all.
func batchable(g *genRequest) bool { return len(g.inputs) == 0 && g.prompt != "" }

// run runs one batch: its requests at once, each into its own outcome.
func (b *batcher) run(batch []*queued) {
	var wg sync.WaitGroup
	for _, q := range batch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.out, q.err = b.h.generate(q.ctx, q.rn)
		}()
	}
	wg.Wait()
	if len(batch) > 1 {
		b.merged(batch)
	}
	for _, q := range batch {
		close(q.done)
	}
}

// merged ends a merged batch as the server's faults say, and logs it as SGLang does.
func (b *batcher) merged(batch []*queued) {
	for _, q := range batch {
		if q.err != nil {
			return // a failed request is answered as one; SGLang logs no processed batch
		}
	}
	switch {
	case b.h.cfg.Faults.BatchSplitFails:
		b.h.logf("ERROR", "Failed to split dynamic batched output cleanly. Skipping sequential fallback and returning errors.")
		for _, q := range batch {
			q.out, q.err = nil, errBatchSplit
		}
		return
	case b.h.cfg.Faults.BatchSwapped:
		batch[0].out.media, batch[1].out.media = batch[1].out.media, batch[0].out.media
	}
	b.h.logf("INFO", "Processed dynamic batch of %d/%d request(s) with max_delay=%.2fms", len(batch), b.max, float64(b.delay)/float64(time.Millisecond))
}

// fail ends every queued request with err, when the server closes.
func (b *batcher) fail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, q := range b.queue {
		q.err = err
		close(q.done)
	}
	b.queue = nil
}
