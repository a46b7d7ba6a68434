package runner

import (
	"context"
	"fmt"

	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// retry is the suite's retry mode, SGLang's rule of PR #39206 (run_pytest in
// test/runner/pytest_runner.py): once every case of the partition has run (confirmation
// requests included), the cases that failed are run again from a fresh server start, up to
// their retry: times, as long as every failed case of the last attempt may be retried
// (judge.RetryBlocked: one consistency failure stops all retries, as SGLang decides over the
// whole attempt's output). A case that passes stops being retried; the last attempt's verdict
// stands and the earlier ones are kept in CaseResult.Attempts, except that a retry cut short
// by a cancel leaves the failure it was to settle in place. results holds the cases in the
// order of cases.
func (r *run) retry(ctx context.Context, runs []results.CaseResult, cases []*suite.Case) []results.CaseResult {
	byID := map[string]*suite.Case{}
	for _, c := range cases {
		byID[c.ID] = c
	}
	last := runs // the cases the previous attempt ran
	for attempt := 1; attempt <= suite.MaxRetry; attempt++ {
		var again []*suite.Case
		for _, cr := range last {
			if c := byID[cr.ID]; c != nil && c.Noise.Retry >= attempt && judge.CaseStatus(cr) == results.Fail {
				again = append(again, c)
			}
		}
		if len(again) == 0 || ctx.Err() != nil {
			return runs
		}
		if why := judge.RetryBlocked(last); why != "" {
			r.logf("retry: not retrying %d failed case(s): %s (SGLang retries only when every failure of an attempt may be retried)", len(again), why)
			return runs
		}
		r.logf("retry %d: running %d failed case(s) again from a fresh server start", attempt, len(again))
		last = nil
		for _, u := range units(r.opts.Suite, again) {
			last = append(last, r.unit(ctx, u)...)
		}
		for _, cr := range last {
			for i := range runs {
				if runs[i].ID != cr.ID {
					continue
				}
				prev := runs[i]
				if judge.CaseStatus(cr) == results.Cancelled {
					// A retry cut short says nothing new: the failure it was to settle stands.
					r.logf("%s: retry %d cancelled; the failure of the attempt before it stands", cr.ID, attempt)
					// requests.jsonl's last line of a request is its verdict: the one that stands.
					for _, rr := range prev.Requests {
						r.revise(rr, fmt.Sprintf("retry %d was cancelled: the verdict of the attempt before it stands", attempt))
					}
					continue
				}
				attempts := prev.Attempts
				prev.Attempts = nil
				prev.Status = judge.CaseStatus(prev)
				cr.Attempts = append(attempts, prev)
				runs[i] = cr
				r.logf("%s: retry %d of %d: %s", cr.ID, attempt, byID[cr.ID].Noise.Retry, judge.CaseStatus(cr))
			}
		}
	}
	return runs
}
