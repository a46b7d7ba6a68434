package report

import (
	"fmt"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/untrusted"
	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/results"
)

// summaryLimit is GitHub's limit on the job summary of one step, in bytes.
const summaryLimit = 1 << 20

// Summary renders the report for the job summary (GITHUB_STEP_SUMMARY): the same Markdown as
// the comment, unabridged unless it would pass summaryLimit.
func Summary(r *Report) string {
	return markdown(r, summaryLimit, "The full report is in report.md and results.json of the run's artifacts.", 0)
}

// Annotation is one annotation: an `::error` for a request (or a case) that did not pass, a
// `::warning` (Warning set) for a flaky request, whose failure confirmation requests did not
// reproduce: the lane passes, but a reader of the run's page should see it.
type Annotation struct {
	Title, Message string
	Warning        bool
	// Case is the id of the case the annotation is about ("" for a lane's error), for a
	// check run's annotation on the case's line of the suite file.
	Case string
}

// Annotations returns an error annotation per request (or case that ran no request) that did
// not pass, and a warning per flaky request, at most limit of each: GitHub shows only the
// first 10 errors and 10 warnings of a step, so when there are more, the last one of that
// kind says how many were left out and where to read them all. Their text shows hidden
// characters as escapes (untrusted.Visible): a server's message may hold any.
func Annotations(lanes []results.Result, limit int) []Annotation {
	errs, warns := annotations(lanes)
	return append(capAnnotations(errs, limit, false), capAnnotations(warns, limit, true)...)
}

// annotations are the error and warning annotations of lanes, uncapped, for the log's and
// the check runs'; their text shows hidden characters as escapes.
func annotations(lanes []results.Result) (all, warns []Annotation) {
	defer func() {
		for _, as := range [][]Annotation{all, warns} {
			for i := range as {
				as[i].Title, as[i].Message = untrusted.Visible(as[i].Title), untrusted.Visible(as[i].Message)
			}
		}
	}()
	multi := len(lanes) > 1
	for _, l := range lanes {
		for _, c := range l.Cases {
			where := "case " + c.ID
			if multi {
				where = "lane " + l.Lane + " " + where
			}
			// A flaky request of a case that failed otherwise is still worth its warning.
			for _, rr := range c.Requests {
				if rr.Status == results.Flaky {
					warns = append(warns, flakyAnnotation(where, c.ID, rr))
				}
			}
			if bad(c.Status) {
				all = append(all, caseAnnotations(where, c)...)
			}
		}
		for _, e := range l.Errors {
			all = append(all, Annotation{Title: "diffusion-check: lane " + l.Lane + " could not check everything", Message: words.FirstLine(e)})
		}
	}
	return all, warns
}

// caseAnnotations are the errors of a case that did not pass (where names it): one for its
// case-level problems, if any, then one per request that did not pass.
func caseAnnotations(where string, c results.CaseResult) []Annotation {
	var all []Annotation
	var caseProblems []string
	for _, ck := range c.Checks {
		if s := checkLine(ck); s != "" {
			caseProblems = append(caseProblems, words.FirstLine(s))
		}
	}
	for _, e := range c.Errors {
		caseProblems = append(caseProblems, words.FirstLine(e))
	}
	if len(caseProblems) == 0 && len(c.Requests) == 0 {
		caseProblems = append(caseProblems, "no requests ran")
	}
	if len(caseProblems) > 0 {
		all = append(all, Annotation{
			Title:   "diffusion-check: " + where + " " + string(c.Status),
			Message: strings.Join(caseProblems, "; "),
			Case:    c.ID,
		})
	}
	for _, rr := range c.Requests {
		if !bad(rr.Status) {
			continue
		}
		ps := requestProblems(rr, func(ck results.Check) bool { return checkLine(ck) != "" && ck.Status != results.Known })
		if len(ps) == 0 {
			ps = append(ps, string(rr.Status)+because(rr.Checks))
		}
		all = append(all, Annotation{
			Title:   fmt.Sprintf("diffusion-check: %s request %d/%d %s", where, rr.Index, rr.Of, rr.Status),
			Message: strings.Join(ps, "; "),
			Case:    c.ID,
		})
	}
	return all
}

// requestProblems are the lines of a request's annotation: each of its checks that tell
// reports (checkLine), but the figures derived from the denoising stage's steps, which are
// counted after the check that tells them, as in the comment's Problems (foldDerived):
// "perf.stage.DenoisingStage = …; under perf.stage.DenoisingStage: 7 step metrics, up to
// 2.29× the limit". A slow stage is one cause, and one line.
func requestProblems(rr results.RequestResult, tell func(results.Check) bool) []string {
	var top *results.Check
	var failing []*results.Check
	for i := range rr.Checks {
		ck := &rr.Checks[i]
		if !tell(*ck) {
			continue
		}
		failing = append(failing, ck)
		if top == nil || tells(ck, top) {
			top = ck
		}
	}
	if top == nil {
		return nil
	}
	var ps []string
	var rest []*results.Check
	for _, ck := range failing {
		if ck != top {
			rest = append(rest, ck)
		}
		if ck == top || !derived(ck) {
			ps = append(ps, words.FirstLine(checkLine(*ck)))
		}
	}
	f := foldDerived(top, rest)
	stage := ""
	if f.stage != nil {
		stage = f.stage.Name
	}
	if t := f.text(stage); t != "" {
		ps = append(ps, t)
	}
	return ps
}

// flakyAnnotation is the warning of a flaky request: its flaky checks (checkLine says what
// the confirmation requests found), the derived step figures folded (requestProblems).
func flakyAnnotation(where, caseID string, rr results.RequestResult) Annotation {
	ps := requestProblems(rr, func(ck results.Check) bool { return ck.Status == results.Flaky })
	return Annotation{
		Title:   fmt.Sprintf("diffusion-check: %s request %d/%d flaky", where, rr.Index, rr.Of),
		Message: strings.Join(ps, "; "),
		Warning: true,
		Case:    caseID,
	}
}

// capAnnotations keeps at most limit annotations (limit ≤ 0: all), the last one saying how
// many more there were.
func capAnnotations(all []Annotation, limit int, warning bool) []Annotation {
	if limit <= 0 || len(all) <= limit {
		return all
	}
	rest := len(all) - (limit - 1)
	what, did := "problems", "did not pass"
	if warning {
		what, did = "flaky requests", "were flaky"
	}
	return append(all[:limit-1:limit-1], Annotation{
		Title:   fmt.Sprintf("diffusion-check: %d more %s", rest, what),
		Message: fmt.Sprintf("%d more requests or cases %s; see the job summary for all of them.", rest, did),
		Warning: warning,
	})
}
