package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/history"
	"github.com/diffusion-check/diffusion-check/internal/gh"
	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/report"
)

// maxAnnotations is how many error annotations, and how many warnings, GitHub shows for one
// step.
const maxAnnotations = 10

// readOnlyNotice explains what to do when the token cannot write: the pattern that lets a
// fork's pull request get its comment and statuses.
const readOnlyNotice = `diffusion-check could not write the PR comment or commit statuses: the token is read-only (a pull request from a fork gets one). The report is in the job summary and the annotations. To publish for forks, use the workflow_run pattern: the pull_request workflow uploads its results folders as artifacts; a second workflow on "workflow_run: completed" (which runs in the base repository with a write token) downloads them and runs "diffusion-check report --publish results*/"; the pull request and commit come from the workflow_run payload, never from an artifact. See docs/security.md.`

// validate checks the flags that need more than their type, and returns the --lane names.
func (o *reportOptions) validate() ([]string, error) {
	if o.budget <= 0 {
		return nil, usagef("--retry-budget %s: must be > 0 (it is the deadline of the whole publish)", o.budget)
	}
	if !commentKeyRE.MatchString(o.key) {
		return nil, usagef("--comment-key %q: want 1 to 64 letters, digits, '.', '_' or '-' (it is written into the comment's marker)", o.key)
	}
	expected := splitList(o.lanes)
	for _, l := range expected {
		if err := checks.ValidName(l); err != nil {
			return nil, usagef("--lane %q: %v", l, err)
		}
	}
	return expected, nil
}

// trend is the comment's trend of a failing check from the --history store, nil without one.
func (o *reportOptions) trend(ctx context.Context, e env) (func(*checks.Result, string, checks.Check) string, error) {
	if o.history == "" {
		return nil, nil
	}
	runs, warnings, err := history.Load(ctx, o.history)
	if err != nil {
		return nil, usagef("--history: %w", err)
	}
	for _, w := range warnings {
		fmt.Fprintf(e.stderr, "warning: history: %v\n", w)
	}
	return history.CommentTrend(runs, o.historyURL, historyTrendRuns), nil
}

// annotate writes the failing checks as workflow annotations, at most maxAnnotations.
func annotate(e env, merged []checks.Result) {
	a := e.action()
	for _, an := range report.Annotations(merged, maxAnnotations) {
		with := a.WithFieldsMap(map[string]string{"title": an.Title})
		if an.Warning {
			with.Warningf("%s", an.Message)
		} else {
			with.Errorf("%s", an.Message)
		}
	}
}

// historyTrendRuns is how many of the base branch's runs a comment's trend shows.
const historyTrendRuns = 10

// reportOptions are the flags of report.
type reportOptions struct {
	publish   bool
	markdown  string
	junit     string
	summary   bool
	event     string
	key       string
	lanes     string
	budget    time.Duration
	pending   bool
	comment   commentMode
	inActions bool
	// suite is the suite file whose case lines the check runs annotate; picturesBranch the
	// branch the failure pictures go to ("" for none).
	suite, picturesBranch string
	// history and historyURL: a history store (docs/history.md) whose base-branch runs give
	// each failing perf and memory check of the comment its trend, linked to the page.
	history, historyURL string
}

func (o *reportOptions) register(fs *flag.FlagSet, e env) {
	o.comment = commentAlways
	fs.BoolVar(&o.publish, "publish", false, "post the PR comment and set a commit status per lane (needs GITHUB_TOKEN, GITHUB_REPOSITORY and the event)")
	fs.Var(&o.comment, "comment", "`MODE`: with --publish, when to post or edit the PR comment: always; failures (when something failed, or to update a comment already there); changes (when the verdicts differ from the comment's); off (statuses only)")
	fs.StringVar(&o.markdown, "markdown", "", "write the full Markdown report to `FILE`")
	fs.StringVar(&o.junit, "junit", "", "write JUnit XML (a test case per request) to `FILE`")
	fs.BoolVar(&o.summary, "summary", e.github().StepSummary != "", "append the report to the job summary ($GITHUB_STEP_SUMMARY; default on when it is set)")
	fs.StringVar(&o.event, "event", "", "an uploaded event payload `FILE`, checked against the workflow's own event ($GITHUB_EVENT_PATH), which alone decides where to publish; used only where that is not set")
	fs.StringVar(&o.key, "comment-key", "default", "tells apart the comments of several reports on one PR")
	fs.StringVar(&o.lanes, "lane", "", "comma-separated `LANES` this report covers; those without results show as running (⏳)")
	fs.DurationVar(&o.budget, "retry-budget", 2*time.Minute, "give up on GitHub this long after publishing starts: one deadline for every request and retry")
	fs.BoolVar(&o.pending, "pending", false, "set the --lane statuses to pending (at the start of a run) and exit; needs no results")
	fs.StringVar(&o.suite, "suite", "", "with --publish, the suite `FILE` the results ran (relative to the repository): each lane's check run annotates the lines of its failing cases")
	fs.StringVar(&o.picturesBranch, "pictures-branch", gh.DefaultAssetsBranch, "with --publish, the `BRANCH` the failure pictures are pushed to, for the comment to show them inline (needs contents: write; never for a fork's pull request); empty: none, the comment links to the artifacts")
	fs.StringVar(&o.history, "history", "", "a history store `DIR` (history append): each failing perf or memory check gets the base branch's last 10 runs, as a sparkline")
	fs.StringVar(&o.historyURL, "history-url", "", "the `URL` of the store's page (history page), which the trend links to")
}

func reportCmd(ctx context.Context, e env, args []string) (int, error) {
	var o reportOptions
	fs := newFlags("report", e)
	o.register(fs, e)
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	expected, err := o.validate()
	if err != nil {
		return 0, err
	}
	ge := e.github()
	o.inActions = ge.Actions
	if ge.Token != "" && o.inActions {
		e.action().AddMask(ge.Token)
	}
	var pub *publishing
	if o.publish || o.pending {
		// One deadline for everything publishing asks of GitHub: finding the pull request,
		// the token's account, the statuses, the pictures, the check runs, the comment.
		// --retry-budget is the whole of it.
		pctx, cancel := context.WithTimeout(ctx, o.budget)
		defer cancel()
		ctx = pctx
		p, err := newPublishing(ctx, e, ge, o.event, o.budget)
		if err != nil {
			return 0, err
		}
		pub = p
	}
	if o.pending {
		return setPending(ctx, e, pub, expected)
	}
	inputs, err := readResults(ctx, e, fs.Args())
	if err != nil {
		return 0, err
	}
	merged, err := checks.Merge(inputs)
	if err != nil {
		return 0, usageError{err}
	}
	if pub != nil {
		// Results of another commit are never published as this one's verdict.
		if err := gh.CheckCommit(merged, pub.ev.HeadSHA); err != nil {
			return pub.fail(e, err)
		}
	}
	worst, err := o.printLanes(e, merged)
	if err != nil {
		return 0, err
	}
	rep := &report.Report{Key: o.key, Lanes: merged, Pending: missingLanes(expected, merged)}
	if rep.Trend, err = o.trend(ctx, e); err != nil {
		return 0, err
	}
	// The statuses go first: they gate merges, and a failure to read the comments must not
	// cost them; then the pictures (which the check runs' summaries and the comment show)
	// and the check runs, neither of which can cost the comment. GitHub being unreachable must not cost the files either: they are written
	// (without the comparison with the previous comment) before the failure is returned.
	var ghErrs []error
	if pub != nil {
		rep.RunURL, rep.RunLabel, rep.FullURL = pub.runURL, pub.runLabel, pub.runURL
		if pub.runURL != "" { // the run's page lists its artifacts under this anchor
			rep.ArtifactsURL = pub.runURL + "#artifacts"
		}
		if err := pub.statuses(ctx, rep); err != nil {
			ghErrs = append(ghErrs, err)
		}
		// The pictures get a third of the budget at most: the comment must not wait on them.
		pictx, cancel := context.WithTimeout(ctx, o.budget/3)
		rep.Pictures = pub.pushPictures(pictx, e, pub.ev, o.picturesBranch, inputs, time.Now())
		cancel()
		suitePath, lines := suiteLines(e, ge, o.suite)
		if err := pub.checkRuns(ctx, e, rep, suitePath, lines); err != nil {
			ghErrs = append(ghErrs, err)
		}
		if err := o.decideComment(ctx, e, pub, rep); err != nil {
			ghErrs = append(ghErrs, err)
		}
	}
	outs := map[string]any{"verdict": string(worstOf(merged)), "failed": strconv.Itoa(checks.TallyRequests(merged...).Failed())}
	if err := o.writeFiles(e, rep, outs); err != nil {
		return 0, err
	}
	if o.inActions {
		annotate(e, merged)
	}
	if pub != nil {
		if pub.comment {
			url, err := pub.postComment(ctx, rep)
			if err != nil {
				ghErrs = append(ghErrs, err)
			} else if url != "" {
				outs["comment_url"] = url
			}
		}
		if code, err, done := o.publishFailed(e, pub, rep, outs, errors.Join(ghErrs...)); done {
			return code, err
		}
	}
	if err := e.setOutputs(outs); err != nil {
		return 0, err
	}
	return worst, nil
}

// publishFailed handles what GitHub refused: with a read-only token the report goes to the
// job summary instead; done says the command ends here with code and err (anything but a
// fork's read-only token, which is told, and the verdict stays the exit code).
func (o *reportOptions) publishFailed(e env, pub *publishing, rep *report.Report, outs map[string]any, ghErr error) (code int, err error, done bool) {
	if ghErr == nil {
		return 0, nil, false
	}
	if readOnly(ghErr) && !o.summary {
		// The comment did not land: the summary is where the report goes instead.
		if err := appendSummary(e, report.Summary(rep)); err != nil {
			return 0, err, true
		}
	}
	if code, err := pub.fail(e, ghErr); err != nil || code != exitOK {
		if serr := e.setOutputs(outs); serr != nil {
			err = errors.Join(err, serr)
		}
		return code, err, true
	}
	return 0, nil, false
}

// decideComment sets pub.comment: whether the report's comment is posted or edited, after
// reading the previous one (rep.Previous) when --comment needs it. An error is GitHub's, and
// then no comment is written blind.
func (o *reportOptions) decideComment(ctx context.Context, e env, pub *publishing, rep *report.Report) error {
	pub.comment = false
	if pub.ev.Number <= 0 {
		fmt.Fprintln(e.stderr, "PR comment: not posted (the event names no pull request)")
		return nil
	}
	found := false
	if o.comment != commentOff { // off: no comment to read, and no account to find
		var err error
		if found, err = pub.previous(ctx, e, rep); err != nil {
			return err
		}
	}
	var why string
	if pub.comment, why = o.comment.wants(rep, found); !pub.comment {
		fmt.Fprintf(e.stderr, "PR comment: not posted (--comment %s: %s)\n", o.comment, why)
	}
	return nil
}

// commentKeyRE is what a --comment-key may be: it goes into the marker, an HTML comment.
var commentKeyRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// readOnly says whether every error in err (an errors.Join of several) is a fork's read-only
// token refusing a write: only then is publishing's failure not a failure of the report.
// (report wraps each failed write with one %w, so a list of errors is always a join.)
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

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for l := range strings.SplitSeq(s, ",") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// setPending sets the statuses of the lanes whose runs start to pending.
func setPending(ctx context.Context, e env, pub *publishing, lanes []string) (int, error) {
	if len(lanes) == 0 {
		return 0, usagef("--pending needs --lane: the lanes whose runs start")
	}
	for _, l := range lanes {
		if err := pub.p.SetStatus(ctx, pub.ev.HeadSHA, ghStatus(report.PendingStatus(l, pub.runURL))); err != nil {
			return pub.fail(e, err)
		}
	}
	fmt.Fprintf(e.stderr, "set %s pending on %s\n", strings.Join(lanes, ", "), pub.ev.HeadSHA)
	return exitOK, nil
}

// printLanes prints each lane's table (and, in Actions, a group per case) and returns the
// worst exit code of the lanes.
func (o *reportOptions) printLanes(e env, merged []checks.Result) (int, error) {
	worst := exitOK
	for i := range merged {
		l := &merged[i]
		if len(merged) > 1 {
			fmt.Fprintf(e.stdout, "== lane %s\n", l.Lane)
		}
		if o.inActions {
			a := e.action()
			caseGroups(e, a.Group, a.EndGroup, l)
		}
		if err := e.untrusted(e.stdout, func() error { return report.Table(e.stdout, l) }); err != nil {
			return 0, err
		}
		worst = max(worst, checks.ExitCode(l.Status))
	}
	return worst, nil
}

// missingLanes are the expected lanes without results: they are still running.
func missingLanes(expected []string, merged []checks.Result) []string {
	var running []string
	for _, l := range expected {
		found := false
		for _, m := range merged {
			found = found || m.Lane == l
		}
		if !found {
			running = append(running, l)
		}
	}
	return running
}

// writeFiles writes the Markdown and JUnit reports and the job summary that were asked for,
// and records their paths in the step outputs.
func (o *reportOptions) writeFiles(e env, rep *report.Report, outs map[string]any) error {
	if o.markdown != "" {
		if err := os.WriteFile(o.markdown, []byte(report.Summary(rep)), 0o644); err != nil {
			return fmt.Errorf("write markdown report: %w", err)
		}
		outs["report_path"] = o.markdown
	}
	if o.junit != "" {
		var b bytes.Buffer
		if err := report.JUnit(&b, rep.Lanes); err != nil {
			return err
		}
		if err := os.WriteFile(o.junit, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write junit report: %w", err)
		}
		outs["junit_path"] = o.junit
	}
	if o.summary {
		return appendSummary(e, report.Summary(rep))
	}
	return nil
}

// publishing is what --publish needs: the GitHub client, the environment, the trusted
// target and the run's URL.
type publishing struct {
	p                *gh.Client
	env              gh.Env
	ev               gh.Event
	runURL, runLabel string
	// comment says whether publish posts or edits the PR comment (--comment); statuses are
	// set either way.
	comment bool
}

func newPublishing(ctx context.Context, e env, ge gh.Env, eventPath string, budget time.Duration) (*publishing, error) {
	missing := ge.Missing("GITHUB_TOKEN", "GITHUB_REPOSITORY")
	if ge.EventPath == "" && eventPath == "" {
		missing = append(missing, "GITHUB_EVENT_PATH or --event")
	}
	if len(missing) > 0 {
		return nil, usagef("--publish needs %s", strings.Join(missing, ", "))
	}
	if _, _, err := ge.OwnerRepo(); err != nil {
		return nil, usageError{err}
	}
	trusted, uploaded, err := ge.Events(ctx, eventPath)
	if err != nil {
		return nil, usageError{err}
	}
	client, err := githubClient(e, ge, budget)
	if err != nil {
		return nil, err
	}
	p := &publishing{p: client, env: ge, comment: true, runURL: ge.RunURL(), runLabel: ge.RunLabel()}
	t, err := p.p.Target(ctx, trusted, uploaded)
	if err != nil {
		if ge.Actions {
			e.action().Errorf("diffusion-check did not publish: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		return nil, err
	}
	for _, n := range t.Notes {
		fmt.Fprintf(e.stderr, "publish: %s\n", n)
	}
	p.ev = t.Event
	p.p.Fork = ge.ReadOnlyFork(t)
	return p, nil
}

// githubClient is the one GitHub API client of every command: the token, GITHUB_API_URL
// (GHES), and retries of what passes within budget, each retry told on stderr.
func githubClient(e env, ge gh.Env, budget time.Duration) (*gh.Client, error) {
	client, err := gh.New(ge, &gh.RetryTransport{
		Base:       e.transport,
		MaxElapsed: budget,
		Attempt:    30 * time.Second,
		OnRetry:    gh.LogRetries(e.stderr),
	})
	if err != nil {
		return nil, usageError{err}
	}
	return client, nil
}

// statuses sets a status per lane on the PR head; it tries every lane and returns every
// error.
func (p *publishing) statuses(ctx context.Context, rep *report.Report) error {
	var errs []error
	for _, l := range rep.Lanes {
		if err := p.p.SetStatus(ctx, p.ev.HeadSHA, ghStatus(report.LaneStatus(l, p.runURL))); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ghStatus is the commit status report renders for a lane, as the API call takes it.
func ghStatus(st report.Status) gh.Status {
	return gh.Status{Context: report.StatusContext(st.Lane), State: st.State, Description: st.Description, TargetURL: st.TargetURL}
}

// postComment upserts the report's comment and returns its URL.
func (p *publishing) postComment(ctx context.Context, rep *report.Report) (string, error) {
	c, err := p.p.UpsertComment(ctx, p.ev.Number, report.Marker(rep.Key), report.Comment(rep))
	if err != nil {
		return "", err
	}
	return c.URL, nil
}

// fail turns a publishing error into the exit code: a fork's read-only token is not a
// failure of the report (exit 0 after a notice); anything else could not run (3), with an
// annotation.
func (p *publishing) fail(e env, err error) (int, error) {
	if readOnly(err) {
		fmt.Fprintln(e.stderr, err)
		if p.env.Actions {
			e.action().Noticef("%s", readOnlyNotice)
		} else {
			fmt.Fprintln(e.stderr, readOnlyNotice)
		}
		return exitOK, nil
	}
	if p.env.Actions {
		e.action().Errorf("diffusion-check could not publish to GitHub: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return exitInfra, err
}

// appendSummary appends md to the job summary ($GITHUB_STEP_SUMMARY) through the toolkit,
// which panics when the file cannot be written; that becomes an error here.
func appendSummary(e env, md string) (err error) {
	path := e.github().StepSummary
	if path == "" {
		return usagef("--summary needs GITHUB_STEP_SUMMARY (set by GitHub Actions)")
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("job summary %s: %v", path, r)
		}
	}()
	e.action().AddStepSummary(md)
	return nil
}

// caseGroups prints each case's problems in a collapsible ::group:: of the log; what the
// results file says (check names, statuses, details) is printed with workflow commands
// stopped.
func caseGroups(e env, group func(string), end func(), l *checks.Result) {
	for _, c := range l.Cases {
		group(fmt.Sprintf("%s %s: %s", l.Lane, c.ID, c.Status))
		_ = e.untrusted(e.stdout, func() error {
			for _, rr := range c.Requests {
				fmt.Fprintf(e.stdout, "request %d/%d: %s, e2e %.1f ms\n", rr.Index, rr.Of, rr.Status, rr.E2EMs)
				for _, ck := range rr.Checks {
					fmt.Fprintf(e.stdout, "  %s: %s %s\n", ck.Name, ck.Status, words.FirstLine(ck.Detail))
				}
			}
			for _, ck := range c.Checks {
				fmt.Fprintf(e.stdout, "case %s: %s %s\n", ck.Name, ck.Status, words.FirstLine(ck.Detail))
			}
			return nil
		})
		end()
	}
}

func worstOf(lanes []checks.Result) checks.Status {
	var cases []checks.CaseResult
	var errs []string
	for _, l := range lanes {
		cases = append(cases, l.Cases...)
		errs = append(errs, l.Errors...)
	}
	return checks.RunStatus(cases, errs)
}
