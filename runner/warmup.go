package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// warmup sends a case's unmeasured warm-up requests (suite warmup, SGLang's
// perf_warmup_requests, DiffusionTestCase, web4hub/Sgl @ 4e66c7cc) on the server its measured
// requests will use, one after another, before them. Their outputs go to a folder beside the
// server's log that is removed afterwards; their perf records are never joined and nothing of
// them is checked. The case-level check server.warmup says that they were answered, or names
// the first that was not (the measured requests are sent all the same: a server the warm-up
// broke fails them as itself). nil when the case has none.
func (r *run) warmup(ctx context.Context, c *suite.Case, srv *server) *results.Check {
	if c.Warmup == 0 {
		return nil
	}
	dir, err := os.MkdirTemp(filepath.Dir(srv.logPath), "warmup-")
	if err != nil {
		return &results.Check{Name: results.ServerWarmup, Status: results.Error, Detail: fmt.Sprintf("warm-up requests: %v", err)}
	}
	defer func() { _ = os.RemoveAll(dir) }()
	timeout := r.opts.Suite.Servers[c.Server].RequestTimeout
	if c.Timeout > 0 {
		timeout = c.Timeout
	}
	start := time.Now()
	for i := 1; i <= c.Warmup; i++ {
		at := slot{index: i, of: c.Warmup, warmup: true}
		_, _, timedOut, err := r.send(ctx, c, srv, at, dir, timeout)
		if err != nil {
			why := err.Error()
			if timedOut {
				why = fmt.Sprintf("no answer within %s: %v", timeout, err)
			}
			r.logf("%s %s: FAIL %s", c.ID, at, why)
			return &results.Check{Name: results.ServerWarmup, Status: results.Fail, Detail: fmt.Sprintf("%s: %s", at, why), Cause: "warm-up request failed"}
		}
	}
	took := time.Since(start).Round(time.Millisecond)
	r.logf("%s: %s answered in %s, not measured", c.ID, words.Plural(c.Warmup, "warm-up request"), took)
	return &results.Check{Name: results.ServerWarmup, Status: results.Pass,
		Detail: fmt.Sprintf("%s answered in %s before the measured ones; not measured, not checked", words.Plural(c.Warmup, "warm-up request"), took)}
}
