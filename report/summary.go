package report

import (
	"fmt"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
)

// SummaryLimit is GitHub's limit on the job summary of one step, in bytes.
const SummaryLimit = 1 << 20

// Summary renders the report for the job summary (GITHUB_STEP_SUMMARY): the same Markdown as
// the comment, unabridged unless it would pass SummaryLimit.
func Summary(r *Report) string {
	return markdown(r, SummaryLimit, "The full report is in report.md and results.json of the run's artifacts.")
}

// Annotation is one `::error` annotation: a request (or a case) that did not pass.
type Annotation struct {
	Title, Message string
}

// Annotations returns an annotation per request (or case that ran no request) that did not
// pass, at most limit of them: GitHub shows only the first 10 errors of a step, so when there
// are more, the last one says how many were left out and where to read them all.
func Annotations(lanes []checks.Result, limit int) []Annotation {
	var all []Annotation
	multi := len(lanes) > 1
	for _, l := range lanes {
		for _, c := range l.Cases {
			if !bad(c.Status) {
				continue
			}
			where := "case " + c.ID
			if multi {
				where = "lane " + l.Lane + " " + where
			}
			var caseProblems []string
			for _, ck := range c.Checks {
				if s := checkLine(ck); s != "" {
					caseProblems = append(caseProblems, firstLine(s))
				}
			}
			for _, e := range c.Errors {
				caseProblems = append(caseProblems, firstLine(e))
			}
			if len(caseProblems) == 0 && len(c.Requests) == 0 {
				caseProblems = append(caseProblems, "no requests ran")
			}
			if len(caseProblems) > 0 {
				all = append(all, Annotation{
					Title:   "diffusion-check: " + where + " " + string(c.Status),
					Message: strings.Join(caseProblems, "; "),
				})
			}
			for _, rr := range c.Requests {
				if !bad(rr.Status) {
					continue
				}
				var ps []string
				for _, ck := range rr.Checks {
					if s := checkLine(ck); s != "" && ck.Status != checks.Known {
						ps = append(ps, firstLine(s))
					}
				}
				if len(ps) == 0 {
					ps = append(ps, string(rr.Status)+because(rr.Checks))
				}
				all = append(all, Annotation{
					Title:   fmt.Sprintf("diffusion-check: %s request %d/%d %s", where, rr.Index, rr.Of, rr.Status),
					Message: strings.Join(ps, "; "),
				})
			}
		}
		for _, e := range l.Errors {
			all = append(all, Annotation{Title: "diffusion-check: lane " + l.Lane + " could not check everything", Message: firstLine(e)})
		}
	}
	if limit > 0 && len(all) > limit {
		rest := len(all) - (limit - 1)
		all = append(all[:limit-1], Annotation{
			Title:   fmt.Sprintf("diffusion-check: %d more problems", rest),
			Message: fmt.Sprintf("%d more requests or cases did not pass; see the job summary for all of them.", rest),
		})
	}
	return all
}
