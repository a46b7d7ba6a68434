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

	"github.com/diffusion-check/diffusion-check/history"
	"github.com/diffusion-check/diffusion-check/internal/gh"
	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/publish"
	"github.com/diffusion-check/diffusion-check/report"
	"github.com/diffusion-check/diffusion-check/results"
)

// maxAnnotations is how many error annotations, and how many warnings, GitHub shows for one
// step.
const maxAnnotations = 10

// validate checks the flags that need more than their type, and returns the --lane names.
func (o *reportOptions) validate() ([]string, error) {
	if o.budget <= 0 {
		return nil, usagef("--retry-budget %s: must be > 0 (it is the deadline of the whole publish)", o.budget)
	}
	if o.spacingErr != nil {
		return nil, usageError{o.spacingErr}
	}
	if o.spacing < 0 {
		return nil, usagef("--write-spacing %s: must be ≥ 0", o.spacing)
	}
	if !commentKeyRE.MatchString(o.key) {
		return nil, usagef("--comment-key %q: want 1 to 64 letters, digits, '.', '_' or '-' (it is written into the comment's marker)", o.key)
	}
	expected := splitList(o.lanes)
	for _, l := range expected {
		if err := results.ValidName(l); err != nil {
			return nil, usagef("--lane %q: %v", l, err)
		}
	}
	return expected, nil
}

// trend is the comment's trend of a failing check from the --history store, nil without one.
func (o *reportOptions) trend(ctx context.Context, e env) (func(*results.Result, string, results.Check) string, error) {
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
func annotate(e env, merged []results.Result) {
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
	publish  bool
	markdown string
	junit    string
	summary  bool
	event    string
	key      string
	lanes    string
	budget   time.Duration
	// spacing is --write-spacing; spacingErr a bad $DIFFUSION_CHECK_WRITE_SPACING, told by
	// validate.
	spacing    time.Duration
	spacingErr error
	pending    bool
	comment    publish.Mode
	inActions  bool
	// suite is the suite file whose case lines the check runs annotate; picturesBranch the
	// branch the failure pictures go to ("" for none).
	suite, picturesBranch string
	// history and historyURL: a history store (docs/history.md) whose base-branch runs give
	// each failing perf and memory check of the comment its trend, linked to the page.
	history, historyURL string
}

func (o *reportOptions) register(fs *flag.FlagSet, e env) {
	o.comment = publish.CommentAlways
	fs.BoolVar(&o.publish, "publish", false, "post the PR comment and set a commit status per lane (needs GITHUB_TOKEN, GITHUB_REPOSITORY and the event)")
	fs.Var(
		&o.comment,
		"comment",
		"`MODE`: with --publish, when to post or edit the PR comment: always; failures (when something failed, or to update a comment already there); "+
			"changes (when the verdicts differ from the comment's); recreate (as always, but a new comment at the end, the old one deleted); off (statuses only)",
	)
	fs.StringVar(&o.markdown, "markdown", "", "write the full Markdown report to `FILE`")
	fs.StringVar(&o.junit, "junit", "", "write JUnit XML (a test case per request) to `FILE`")
	fs.BoolVar(&o.summary, "summary", e.github().StepSummary != "", "append the report to the job summary ($GITHUB_STEP_SUMMARY; default on when it is set)")
	fs.StringVar(
		&o.event,
		"event",
		"",
		"an uploaded event payload `FILE`, checked against the workflow's own event ($GITHUB_EVENT_PATH), which alone decides where to publish; "+
			"used only where that is not set",
	)
	fs.StringVar(&o.key, "comment-key", "default", "tells apart the comments of several reports on one PR")
	fs.StringVar(&o.lanes, "lane", "", "comma-separated `LANES` this report covers; those without results show as running (⏳)")
	fs.DurationVar(&o.budget, "retry-budget", 2*time.Minute, "give up on GitHub this long after publishing starts: one deadline for every request and retry")
	spacing, err := writeSpacing(e)
	o.spacingErr = err
	fs.DurationVar(&o.spacing, "write-spacing", spacing,
		"least time between two writes to GitHub (comment, statuses, check runs, pictures), as GitHub asks of content creation "+
			"(default $"+writeSpacingEnv+", else 1s)")
	fs.BoolVar(&o.pending, "pending", false, "set the --lane statuses to pending (at the start of a run) and exit; needs no results")
	fs.StringVar(&o.suite, "suite", "",
		"the suite `FILE` the results ran (relative to the repository): with --publish each lane's check run annotates the lines of its failing cases; "+
			"with --junit each test case gets its file and line")
	fs.StringVar(
		&o.picturesBranch,
		"pictures-branch",
		gh.DefaultAssetsBranch,
		"with --publish, the `BRANCH` the failure pictures are pushed to, for the comment to show them inline (needs contents: write; "+
			"never for a fork's pull request); empty: none, the comment links to the artifacts",
	)
	fs.StringVar(&o.history, "history", "",
		"a history store `DIR` (history append): each failing perf or memory check gets the base branch's last 10 runs, as a sparkline")
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
	o.inActions = e.github().Actions
	if e.github().Token != "" && o.inActions {
		e.action().AddMask(e.github().Token)
	}
	var target *publishTarget
	if o.publish || o.pending {
		// One deadline for everything publishing asks of GitHub, finding the pull request
		// included: --retry-budget is the whole of it (publish.Options.Budget).
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.budget)
		defer cancel()
		if target, err = newPublishTarget(ctx, e, o.event, o.budget, o.spacing); err != nil {
			return 0, err
		}
	}
	if o.pending {
		return o.publishPending(ctx, e, target, expected)
	}
	inputs, err := readInputs(ctx, e, fs.Args())
	if err != nil {
		return 0, err
	}
	merged, err := mergeLanes(inputs)
	if err != nil {
		return 0, err
	}
	worst, err := o.printLanes(e, merged)
	if err != nil {
		return 0, err
	}
	rep := &report.Report{Key: o.key, Lanes: merged, Pending: missingLanes(expected, merged)}
	if rep.Trend, err = o.trend(ctx, e); err != nil {
		return 0, err
	}
	return o.finish(ctx, e, target, rep, inputs, worst)
}

// commentKeyRE is what a --comment-key may be: it goes into the marker, an HTML comment.
var commentKeyRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

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

// printLanes prints each lane's table (and, in Actions, a group per case) and returns the
// worst exit code of the lanes.
func (o *reportOptions) printLanes(e env, merged []results.Result) (int, error) {
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
		worst = max(worst, verdictExit(l.Status))
	}
	return worst, nil
}

// missingLanes are the expected lanes without results: they are still running.
func missingLanes(expected []string, merged []results.Result) []string {
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
		file, lines := suiteLines(e, e.github(), o.suite) // each test case's file and line
		if err := report.JUnit(&b, rep.Lanes, file, lines); err != nil {
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

// publishTarget is what --publish needs beside the report: the GitHub client, the
// environment and the trusted target.
type publishTarget struct {
	client *gh.Client
	env    gh.Env
	ev     gh.Event
}

func newPublishTarget(ctx context.Context, e env, eventPath string, budget, spacing time.Duration) (*publishTarget, error) {
	ge := e.github()
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
	client, err := githubClient(e, ge, budget, spacing)
	if err != nil {
		return nil, err
	}
	t, err := client.Target(ctx, trusted, uploaded)
	if err != nil {
		if ge.Actions {
			e.action().Errorf("diffusion-check did not publish: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		return nil, err
	}
	for _, n := range t.Notes {
		fmt.Fprintf(e.stderr, "publish: %s\n", n)
	}
	client.Fork = ge.ReadOnlyFork(t)
	return &publishTarget{client: client, env: ge, ev: t.Event}, nil
}

// writeSpacingEnv sets --write-spacing's default (tests of a fake GitHub set it to 0s).
const writeSpacingEnv = "DIFFUSION_CHECK_WRITE_SPACING"

// writeSpacing is the default spacing of writes: $DIFFUSION_CHECK_WRITE_SPACING, else 1 s,
// GitHub's "at least one second between each request" that creates content ("Rate limits for
// the REST API").
func writeSpacing(e env) (time.Duration, error) {
	v := strings.TrimSpace(e.getenv(writeSpacingEnv))
	if v == "" {
		return time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return time.Second, fmt.Errorf("%s=%q: want a duration ≥ 0, such as 1s", writeSpacingEnv, v)
	}
	return d, nil
}

// githubClient is the one GitHub API client of every command: the token, GITHUB_API_URL
// (GHES), retries of what passes within budget, each retry told on stderr, and writes spaced
// by spacing.
func githubClient(e env, ge gh.Env, budget, spacing time.Duration) (*gh.Client, error) {
	client, err := gh.New(ge, &gh.RetryTransport{
		Base:         e.transport,
		MaxElapsed:   budget,
		Attempt:      30 * time.Second,
		OnRetry:      gh.LogRetries(e.stderr),
		WriteSpacing: spacing,
	})
	if err != nil {
		return nil, usageError{err}
	}
	return client, nil
}

// publishOptions are the flags and environment of a publish to target t.
func (o *reportOptions) publishOptions(e env, t *publishTarget) publish.Options {
	suitePath, lines := suiteLines(e, t.env, o.suite)
	return publish.Options{
		Event: t.ev, Env: t.env, Comment: o.comment, Budget: o.budget, PicturesBranch: o.picturesBranch,
		SuitePath: suitePath, SuiteLines: lines, Summarized: o.summary, Now: time.Now(),
		Log: e.stderr, Run: actionsRun{e},
	}
}

// finish publishes rep when asked (publish.Publish), then writes the files, the annotations
// and the step outputs. GitHub being unreachable must not cost the files: they are written
// whatever publishing returned, and its failure (exit 3) is returned after them.
func (o *reportOptions) finish(ctx context.Context, e env, t *publishTarget, rep *report.Report, inputs []results.Input, worst int) (int, error) {
	outs := map[string]any{"verdict": string(worstOf(rep.Lanes)), "failed": strconv.Itoa(results.TallyRequests(rep.Lanes...).Failed())}
	var pubErr error
	movedOn := ""
	if t != nil {
		var po publish.Outputs
		po, pubErr = publish.Publish(ctx, t.client, rep, inputs, o.publishOptions(e, t))
		if po.CommentURL != "" {
			outs["comment_url"] = po.CommentURL
		}
		if len(po.CheckRuns) > 0 {
			// check_run_url is the first lane's, as one address (EnricoMi's check_url);
			// check_run_urls every lane's, {"lane": "url"}.
			outs["check_run_url"] = po.CheckRuns[0].URL
			byLane := map[string]string{}
			for _, r := range po.CheckRuns {
				byLane[r.Lane] = r.URL
			}
			outs["check_run_urls"] = byLane
		}
		movedOn = po.MovedOn
	}
	if err := o.writeFiles(e, rep, outs); err != nil {
		return 0, err
	}
	if o.inActions {
		annotate(e, rep.Lanes)
	}
	if pubErr != nil {
		code, err := publishFailed(e, pubErr)
		return code, errors.Join(err, e.setOutputs(outs))
	}
	if err := e.setOutputs(outs); err != nil {
		return 0, err
	}
	if movedOn != "" && worst != exitOK {
		// The verdict is on its own commit's statuses; this job of a superseded push does
		// not fail the newer push's workflow page.
		fmt.Fprintf(e.stderr, "report: exit 0, not %d: these results are of an earlier push (the pull request's head is %s); its statuses say so\n",
			worst, movedOn)
		return exitOK, nil
	}
	return worst, nil
}

// publishPending sets the --lane statuses to pending (publish.Pending).
func (o *reportOptions) publishPending(ctx context.Context, e env, t *publishTarget, lanes []string) (int, error) {
	if len(lanes) == 0 {
		return 0, usagef("--pending needs --lane: the lanes whose runs start")
	}
	opts := o.publishOptions(e, t)
	if _, err := publish.Pending(ctx, t.client, lanes, opts); err != nil {
		return publishFailed(e, err)
	}
	return exitOK, nil
}

// publishFailed is a publishing error that is not a fork's read-only token (publish tells
// that one itself): exit 3 (could not run), with an annotation.
func publishFailed(e env, err error) (int, error) {
	if e.github().Actions {
		e.action().Errorf("diffusion-check could not publish to GitHub: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return exitInfra, err
}

// actionsRun is publish.Run on this command's workflow run: notices through the toolkit (on
// stderr outside Actions), the job summary through appendSummary.
type actionsRun struct{ e env }

func (r actionsRun) Notice(msg string) {
	if r.e.github().Actions {
		r.e.action().Noticef("%s", msg)
		return
	}
	fmt.Fprintln(r.e.stderr, msg)
}

// Warning is a ::warning in a workflow (a yellow annotation), a line on stderr elsewhere.
func (r actionsRun) Warning(msg string) {
	if r.e.github().Actions {
		r.e.action().Warningf("%s", msg)
		return
	}
	fmt.Fprintln(r.e.stderr, msg)
}

func (r actionsRun) AddSummary(md string) error { return appendSummary(r.e, md) }

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
func caseGroups(e env, group func(string), end func(), l *results.Result) {
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

func worstOf(lanes []results.Result) results.Status {
	var cases []results.CaseResult
	var errs []string
	for _, l := range lanes {
		cases = append(cases, l.Cases...)
		errs = append(errs, l.Errors...)
	}
	return judge.RunStatus(cases, errs)
}
