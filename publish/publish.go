package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/gh"
	"github.com/diffusion-check/diffusion-check/report"
	"github.com/diffusion-check/diffusion-check/results"
)

// readOnlyNotice explains what to do when the token cannot write: the pattern that lets a
// fork's pull request get its comment and statuses.
const readOnlyNotice = `diffusion-check could not write the PR comment or commit statuses: the token is read-only (a pull request from a fork gets one). ` +
	`The report is in the job summary and the annotations. To publish for forks, use the workflow_run pattern: the pull_request workflow uploads its results ` +
	`folders as artifacts; a second workflow on "workflow_run: completed" (which runs in the base repository with a write token) downloads them and runs ` +
	`"diffusion-check report --publish results*/"; the pull request and commit come from the workflow_run payload, never from an artifact. See docs/security.md.`

// Run is the workflow run publishing tells what the API did not take: a notice in its log
// (what did not fail the report but needs a reader: a refused check run, pictures not
// uploaded), and the job summary that stands in for a comment a read-only token could not
// write. cmd implements it with the Actions toolkit.
type Run interface {
	Notice(msg string)
	// Warning is a problem the report worked around that its reader should see (a comment
	// posted anew because the token's account could not be told).
	Warning(msg string)
	AddSummary(markdown string) error
}

// Options are what Publish needs beside the client, the report and the results.
type Options struct {
	// Event is the trusted target (gh.Client.Target): the pull request and its head commit.
	Event gh.Event
	// Env is the workflow's environment: the run's URL (each status, check run and comment
	// links to it), the server URL and run id of the pictures.
	Env gh.Env
	// Comment says when the PR comment is posted or edited.
	Comment Mode
	// Budget is the one deadline of everything Publish asks of GitHub (see the package doc).
	Budget time.Duration
	// PicturesBranch is the branch the failure pictures go to; "" for none.
	PicturesBranch string
	// SuitePath and SuiteLines: the suite file (relative to the repository) whose case lines
	// (by case id) the check runs annotate; "" and nil for no annotations.
	SuitePath  string
	SuiteLines map[string]int
	// Summarized says the caller puts the report in the job summary itself: the read-only
	// fallback does not add it twice.
	Summarized bool
	// Now is the time the pictures' folder is named by.
	Now time.Time
	// Log takes progress and what was not published, one line each (stderr).
	Log io.Writer
	// Run takes the notices and the read-only fallback's job summary.
	Run Run
}

// Outputs is what publishing made.
type Outputs struct {
	// CommentURL is the PR comment's address, "" when none was written.
	CommentURL string
	// CheckRuns are the check runs created, one per lane, in the report's lane order.
	CheckRuns []LaneCheckRun
	// ReadOnly says the token was a fork's read-only one: nothing was written, the report is
	// in the job summary, and readOnlyNotice was told.
	ReadOnly bool
	// MovedOn is the pull request's head when it is no longer the report's commit: the
	// report is of an earlier push, its statuses were set and the comment was left to the
	// newer push ("" otherwise).
	MovedOn string
}

// Publish writes report rep, merged from inputs, to GitHub: the statuses, the pictures, the
// check runs and the comment, in the order and within the budget of the package doc. It
// fills rep's links (run, artifacts), pictures and previous state as it learns them, so
// that what the caller renders afterwards (Markdown file, job summary) says the same as the
// comment. An error is a failure to publish that is not a fork's read-only token.
func Publish(ctx context.Context, client *gh.Client, rep *report.Report, inputs []results.Input, opts Options) (Outputs, error) {
	if err := gh.CheckCommit(rep.Lanes, opts.Event.HeadSHA); err != nil {
		return Outputs{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Budget)
	defer cancel()
	p := &publisher{c: client, opts: opts}
	runURL := opts.Env.RunURL()
	rep.RunURL, rep.RunLabel, rep.FullURL = runURL, opts.Env.RunLabel(), runURL
	if runURL != "" { // the run's page lists its artifacts under this anchor
		rep.ArtifactsURL = runURL + "#artifacts"
	}
	var errs []error
	if err := p.statuses(ctx, rep); err != nil {
		errs = append(errs, err)
	}
	pictx, cancelPictures := context.WithTimeout(ctx, opts.Budget/3)
	rep.Pictures = p.pushPictures(pictx, inputs)
	cancelPictures()
	if err := p.checkRuns(ctx, rep); err != nil {
		errs = append(errs, err)
	}
	var out Outputs
	url, err := p.comment(ctx, rep)
	if err != nil {
		errs = append(errs, err)
	}
	out.CommentURL, out.MovedOn, out.CheckRuns = url, p.movedOn, p.runs
	return p.readOnlyFallback(rep, out, errors.Join(errs...))
}

// Pending sets the statuses of lanes, whose runs start, to pending. A fork's read-only token
// is told as Publish tells it (Outputs.ReadOnly), without a job summary: there is no report.
func Pending(ctx context.Context, client *gh.Client, lanes []string, opts Options) (Outputs, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.Budget)
	defer cancel()
	for _, l := range lanes {
		if err := client.SetStatus(ctx, opts.Event.HeadSHA, ghStatus(report.PendingStatus(l, opts.Env.RunURL()))); err != nil {
			if readOnly(err) {
				fmt.Fprintln(opts.Log, err)
				opts.Run.Notice(readOnlyNotice)
				return Outputs{ReadOnly: true}, nil
			}
			return Outputs{}, err
		}
	}
	fmt.Fprintf(opts.Log, "set %s pending on %s\n", strings.Join(lanes, ", "), opts.Event.HeadSHA)
	return Outputs{}, nil
}

// publisher is Publish under way.
type publisher struct {
	c    *gh.Client
	opts Options
	// movedOn is the pull request's head when the comment was left to a newer push.
	movedOn string
	// runs are the check runs created (checkRuns).
	runs []LaneCheckRun
}

// readOnlyFallback ends Publish: with nothing refused it returns out; when every refusal was
// a fork's read-only token, the report goes to the job summary and the notice is told; any
// other failure is returned.
func (p *publisher) readOnlyFallback(rep *report.Report, out Outputs, err error) (Outputs, error) {
	if err == nil {
		return out, nil
	}
	if !readOnly(err) {
		return out, err
	}
	fmt.Fprintln(p.opts.Log, err)
	if !p.opts.Summarized {
		// The comment did not land: the summary is where the report goes instead.
		if serr := p.opts.Run.AddSummary(report.Summary(rep)); serr != nil {
			return out, serr
		}
	}
	p.opts.Run.Notice(readOnlyNotice)
	out.ReadOnly = true
	return out, nil
}

// readOnly says whether every error in err (an errors.Join of several) is a fork's read-only
// token refusing a write: only then is publishing's failure not a failure of the report.
// (Each failed write is wrapped with one %w, so a list of errors is always a join.)
func readOnly(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !readOnly(e) {
				return false
			}
		}
		return len(j.Unwrap()) > 0
	}
	return errors.Is(err, gh.ErrReadOnly)
}

// statuses sets a status per lane on the PR head; it tries every lane and returns every
// error.
func (p *publisher) statuses(ctx context.Context, rep *report.Report) error {
	var errs []error
	for _, l := range rep.Lanes {
		if err := p.c.SetStatus(ctx, p.opts.Event.HeadSHA, ghStatus(report.LaneStatus(l, rep.RunURL))); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ghStatus is the commit status report renders for a lane, as the API call takes it.
func ghStatus(st report.Status) gh.Status {
	return gh.Status{Context: report.StatusContext(st.Lane), State: st.State, Description: st.Description, TargetURL: st.TargetURL}
}
