package publish

import (
	"context"
	"errors"
	"fmt"

	"github.com/diffusion-check/diffusion-check/internal/gh"
	"github.com/diffusion-check/diffusion-check/report"
)

// checkRunsNotice says what a refused check run needs.
const checkRunsNotice = `diffusion-check could not create its check runs: the token may not write them. Give the report job "permissions: checks: write" to ` +
	`see a check run per lane on the Checks tab, with annotations on the suite's case lines; the comment and the commit statuses are set either way. See ` +
	`docs/github-actions.md.`

// LaneCheckRun is the address of one lane's check run.
type LaneCheckRun struct {
	Lane, URL string
}

// checkRuns creates a check run per lane and records their addresses (p.runs), in the
// report's lane order. A refusal (403: no checks: write) is told once as a notice, a fork's
// read-only token on the log (its own notice comes later); neither is an error, any other
// failure is.
func (p *publisher) checkRuns(ctx context.Context, rep *report.Report) error {
	var errs []error
	for _, l := range rep.Lanes {
		run := report.LaneCheckRun(rep, l, p.opts.SuitePath, p.opts.SuiteLines)
		cr := gh.CheckRun{Name: run.Name, HeadSHA: p.opts.Event.HeadSHA, Conclusion: run.Conclusion, DetailsURL: rep.RunURL, Title: run.Title, Summary: run.Summary}
		for _, a := range run.Annotations {
			cr.Annotations = append(cr.Annotations, gh.Annotation{Path: a.Path, StartLine: a.Line, EndLine: a.Line, Level: a.Level, Title: a.Title, Message: a.Message})
		}
		url, err := p.c.CreateCheckRun(ctx, cr)
		if errors.Is(err, gh.ErrReadOnly) { // a fork's token: the read-only notice says it all
			fmt.Fprintf(p.opts.Log, "check runs: %v\n", err)
			return nil
		}
		if errors.Is(err, gh.ErrForbidden) {
			fmt.Fprintf(p.opts.Log, "check runs: %v\n", err)
			p.opts.Run.Notice(checkRunsNotice)
			return nil
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.runs = append(p.runs, LaneCheckRun{Lane: l.Lane, URL: url})
	}
	return errors.Join(errs...)
}
