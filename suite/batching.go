package suite

import (
	"fmt"
	"strconv"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
	"gopkg.in/yaml.v3"
)

// DynamicBatching is a case's dynamic-batching smoke (SGLang's dynamic_batching_requests,
// test_server_common.py _test_dynamic_batching_smoke, read through the search index at a
// commit newer than pandalee99/sglang @ cce0a1244): its two requests are sent one after the
// other as references, then both at once, and the server must answer each batched request
// with its own image and log that it merged them (checks.DynamicBatching).
type DynamicBatching struct {
	// Requests are the two image requests, each whole (not over the case's request), with a
	// prompt and a size, as SGLang's DiffusionSamplingParams.
	Requests [2]Request
	// Timeout bounds each of its requests (SGLang's _DYNAMIC_BATCH_REQUEST_TIMEOUT_SECS);
	// LogTimeout the wait, after the batched answers, for the scheduler's lines
	// (_DYNAMIC_BATCH_LOG_TIMEOUT_SECS).
	Timeout, LogTimeout time.Duration
}

// SGLang's timeouts of the smoke (test_server_common.py), the defaults of DynamicBatching.
const (
	defaultBatchingTimeout    = 120 * time.Second
	defaultBatchingLogTimeout = 10 * time.Second
)

// batchingSize is the --batching-max-size the smoke's log markers name ("size=2/2,
// user_max=2"): a server started with another logs other lines.
const batchingSize = 2

// caseBatching reads a case's dynamic_batching block: two image requests, each with a prompt
// and a size (SGLang asserts both), on a server whose batch size, where the suite says it,
// is the one SGLang's markers name.
func (d *decoder) caseBatching(o *object, field string, c *Case, srv *Server) {
	v, f, ok := o.get("dynamic_batching")
	if !ok {
		return
	}
	bo := d.object(v, f, keysOf(batchingObject)...)
	if bo == nil {
		return
	}
	b := &DynamicBatching{Timeout: defaultBatchingTimeout, LogTimeout: defaultBatchingLogTimeout}
	bo.duration("timeout", &b.Timeout, time.Nanosecond)
	bo.duration("log_timeout", &b.LogTimeout, time.Nanosecond)
	if c.Modality != "" && c.Modality != Image {
		d.Addf(bo.line, f, "dynamic batching is checked on images (SGLang's smoke sends Images API requests), got modality %s", c.Modality)
	}
	if why := batchingServer(srv); why != "" {
		d.Addf(bo.line, f, "%s", why)
	}
	rv, rf, ok := bo.require("requests")
	if !ok {
		return
	}
	n := strictdecode.Deref(rv)
	if n.Kind != yaml.SequenceNode {
		d.Addf(rv.Line, rf, "want a list of exactly two requests (SGLang's smoke merges two), got %s", strictdecode.Describe(n))
		return
	}
	if len(n.Content) != len(b.Requests) {
		d.Addf(rv.Line, rf, "want a list of exactly two requests (SGLang's smoke merges two), got %d", len(n.Content))
		return
	}
	for i, el := range n.Content {
		ef := fmt.Sprintf("%s[%d]", rf, i)
		r := d.request(el, ef, Image)
		if r.Prompt == "" {
			d.Addf(el.Line, strictdecode.Join(ef, "prompt"), "missing: each batched request needs a prompt, as SGLang asserts")
		}
		if r.Size == "" {
			d.Addf(el.Line, strictdecode.Join(ef, "size"), "missing: each batched request needs a size, whose shape its image must have")
		}
		b.Requests[i] = r
	}
	c.Batching = b
}

// batchingServer says why server srv cannot show SGLang's markers of a merged pair: a
// builtin server or an `sglang serve` command whose batch size is not batchingSize. "" when
// it can, or when the suite cannot tell (another command).
func batchingServer(srv *Server) string {
	switch {
	case srv == nil:
		return ""
	case srv.Builtin != nil:
		if n := srv.Builtin.BatchingMaxSize; n != batchingSize {
			got := strconv.Itoa(n)
			if n == 0 {
				got = "none (default 1: no batching)"
			}
			return fmt.Sprintf("the builtin server %s must merge two requests (batching_max_size: %d), got %s", srv.Name, batchingSize, got)
		}
	case SGLangServe(srv.Command):
		v := FlagValue(srv.Command, "--batching-max-size")
		if n, err := strconv.Atoi(v); err != nil || n != batchingSize {
			if v == "" {
				v = "none (SGLang's default 1: no batching)"
			}
			return fmt.Sprintf("the server %s must be started with --batching-max-size %d, whose scheduler lines SGLang's smoke reads "+
				"(\"size=2/2, user_max=2\"), got %s", srv.Name, batchingSize, v)
		}
	}
	return ""
}
