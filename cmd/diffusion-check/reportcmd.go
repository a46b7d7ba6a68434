package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/report"
)

// maxAnnotations is how many error annotations GitHub shows for one step.
const maxAnnotations = 10

// readOnlyNotice explains what to do when the token cannot write: the pattern that lets a
// fork's pull request get its comment and statuses.
const readOnlyNotice = `diffusion-check could not write the PR comment or commit statuses: the token is read-only (a pull request from a fork gets one). The report is in the job summary and the annotations. To publish for forks, use the workflow_run pattern: the pull_request workflow uploads its results folders as artifacts; a second workflow on "workflow_run: completed" (which runs in the base repository with a write token) downloads them and runs "diffusion-check report --publish results*/"; the pull request and commit come from the workflow_run payload, never from an artifact. See docs/security.md.`

func reportCmd(ctx context.Context, e env, args []string) (int, error) {
	fs := newFlags("report", e)
	publish := fs.Bool("publish", false, "post the PR comment and set a commit status per lane (needs GITHUB_TOKEN, GITHUB_REPOSITORY and the event)")
	markdownPath := fs.String("markdown", "", "write the full Markdown report to `FILE`")
	junitPath := fs.String("junit", "", "write JUnit XML (a test case per request) to `FILE`")
	summary := fs.Bool("summary", e.getenv("GITHUB_STEP_SUMMARY") != "", "append the report to the job summary ($GITHUB_STEP_SUMMARY; default on when it is set)")
	eventPath := fs.String("event", "", "an uploaded event payload `FILE`, checked against the workflow's own event ($GITHUB_EVENT_PATH), which alone decides where to publish; used only where that is not set")
	key := fs.String("comment-key", "default", "tells apart the comments of several reports on one PR")
	lanes := fs.String("lane", "", "comma-separated `LANES` this report covers; those without results show as running (⏳)")
	budget := fs.Duration("retry-budget", 2*time.Minute, "give up retrying GitHub after waiting this long in total")
	pending := fs.Bool("pending", false, "set the --lane statuses to pending (at the start of a run) and exit; needs no results")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	inActions := e.getenv("GITHUB_ACTIONS") == "true"
	a := e.action()
	token := e.getenv("GITHUB_TOKEN")
	if token != "" && inActions {
		a.AddMask(token)
	}
	var expected []string
	for l := range strings.SplitSeq(*lanes, ",") {
		if l = strings.TrimSpace(l); l != "" {
			expected = append(expected, l)
		}
	}
	var pub *publishing
	if *publish || *pending {
		p, err := newPublishing(ctx, e, token, *eventPath, *budget)
		if err != nil {
			return 0, err
		}
		pub = p
	}
	if *pending {
		if len(expected) == 0 {
			return 0, usagef("--pending needs --lane: the lanes whose runs start")
		}
		for _, l := range expected {
			if err := pub.p.SetStatus(ctx, pub.ev.HeadSHA, report.PendingStatus(l, pub.runURL)); err != nil {
				return pub.fail(e, err)
			}
		}
		fmt.Fprintf(e.stderr, "set %s pending on %s\n", strings.Join(expected, ", "), pub.ev.HeadSHA)
		return exitOK, nil
	}
	inputs, err := readResults(fs.Args())
	if err != nil {
		return 0, err
	}
	merged, err := checks.Merge(inputs)
	if err != nil {
		return 0, usageError{err}
	}
	worst := exitOK
	for i := range merged {
		l := &merged[i]
		if len(merged) > 1 {
			fmt.Fprintf(e.stdout, "== lane %s\n", l.Lane)
		}
		if inActions {
			caseGroups(e, a.Group, a.EndGroup, l)
		}
		if err := report.Table(e.stdout, l); err != nil {
			return 0, err
		}
		worst = max(worst, checks.ExitCode(l.Status))
	}
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
	rep := &report.Report{Key: *key, Lanes: merged, Pending: running}
	// GitHub being unreachable must not cost the files: they are written (without the
	// comparison with the previous comment) before the failure is returned.
	var ghErr error
	if pub != nil {
		rep.RunURL, rep.RunLabel, rep.FullURL = pub.runURL, pub.runLabel, pub.runURL
		if pub.ev.Number > 0 {
			prev, err := pub.p.FindComment(ctx, pub.ev.Number, *key)
			switch {
			case err != nil:
				ghErr = err
			case prev != nil:
				rep.Previous = report.ParseState(prev.Body)
			}
		}
	}
	outs := map[string]any{"verdict": string(worstOf(merged)), "failed": strconv.Itoa(checks.TallyRequests(merged...).Failed())}
	if *markdownPath != "" {
		if err := os.WriteFile(*markdownPath, []byte(report.Summary(rep)), 0o644); err != nil {
			return 0, fmt.Errorf("write markdown report: %w", err)
		}
		outs["report_path"] = *markdownPath
	}
	if *junitPath != "" {
		var b bytes.Buffer
		if err := report.JUnit(&b, merged); err != nil {
			return 0, err
		}
		if err := os.WriteFile(*junitPath, b.Bytes(), 0o644); err != nil {
			return 0, fmt.Errorf("write junit report: %w", err)
		}
	}
	if *summary {
		if err := appendSummary(e, report.Summary(rep)); err != nil {
			return 0, err
		}
	}
	if inActions {
		for _, an := range report.Annotations(merged, maxAnnotations) {
			a.WithFieldsMap(map[string]string{"title": an.Title}).Errorf("%s", an.Message)
		}
	}
	if ghErr != nil {
		code, err := pub.fail(e, ghErr)
		if serr := e.setOutputs(outs); serr != nil {
			err = errors.Join(err, serr)
		}
		return code, err
	}
	if pub != nil {
		url, err := pub.publish(ctx, rep)
		switch {
		case errors.Is(err, report.ErrReadOnly):
			fmt.Fprintln(e.stderr, err)
			if inActions {
				a.Noticef("%s", readOnlyNotice)
			} else {
				fmt.Fprintln(e.stderr, readOnlyNotice)
			}
			if !*summary {
				// The comment did not land: the summary is where the report goes instead.
				if err := appendSummary(e, report.Summary(rep)); err != nil {
					return 0, err
				}
			}
		case err != nil:
			code, err := pub.fail(e, err)
			if serr := e.setOutputs(outs); serr != nil {
				err = errors.Join(err, serr)
			}
			return code, err
		default:
			outs["comment_url"] = url
		}
	}
	if err := e.setOutputs(outs); err != nil {
		return 0, err
	}
	return worst, nil
}

// publishing is what --publish needs: a Publisher, the event and the run's URL.
type publishing struct {
	p                *report.Publisher
	ev               report.Event
	runURL, runLabel string
	inActions        bool
}

func newPublishing(ctx context.Context, e env, token, eventPath string, budget time.Duration) (*publishing, error) {
	var missing []string
	if token == "" {
		missing = append(missing, "GITHUB_TOKEN")
	}
	repo := e.getenv("GITHUB_REPOSITORY")
	if repo == "" {
		missing = append(missing, "GITHUB_REPOSITORY")
	}
	// The workflow's own event (GITHUB_EVENT_PATH) is the only one trusted to say where to
	// publish; --event (an uploaded artifact, which a pull request's code may have written)
	// is only checked against it. Outside Actions there is no own event: --event is all.
	trustedPath := e.getenv("GITHUB_EVENT_PATH")
	if trustedPath == "" {
		trustedPath, eventPath = eventPath, ""
	}
	if trustedPath == "" {
		missing = append(missing, "GITHUB_EVENT_PATH or --event")
	}
	if len(missing) > 0 {
		return nil, usagef("--publish needs %s", strings.Join(missing, ", "))
	}
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" {
		return nil, usagef("GITHUB_REPOSITORY: want OWNER/NAME, got %q", repo)
	}
	trusted, err := readEvent(trustedPath)
	if err != nil {
		return nil, err
	}
	var uploaded *report.Event
	if eventPath != "" {
		ev, err := readEvent(eventPath)
		if err != nil {
			return nil, err
		}
		uploaded = &ev
	}
	client, err := report.NewClient(e.getenv("GITHUB_API_URL"), token, &report.RetryTransport{
		MaxElapsed: budget,
		Attempt:    30 * time.Second,
		OnRetry: func(req *http.Request, status int, err error, wait time.Duration) {
			why := strconv.Itoa(status)
			if err != nil {
				why = err.Error()
			}
			fmt.Fprintf(e.stderr, "GitHub %s %s: %s; retrying in %s\n", req.Method, req.URL.Path, why, wait.Round(time.Millisecond))
		},
	})
	if err != nil {
		return nil, usageError{err}
	}
	server := cmp.Or(e.getenv("GITHUB_SERVER_URL"), "https://github.com")
	p := &publishing{p: &report.Publisher{Client: client, Owner: owner, Repo: name}, inActions: e.getenv("GITHUB_ACTIONS") == "true"}
	t, err := p.p.Target(ctx, trusted, uploaded)
	if err != nil {
		if p.inActions {
			e.action().Errorf("diffusion-check did not publish: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		return nil, err
	}
	for _, n := range t.Notes {
		fmt.Fprintf(e.stderr, "publish: %s\n", n)
	}
	p.ev = t.Event
	if id := e.getenv("GITHUB_RUN_ID"); id != "" {
		p.runURL = fmt.Sprintf("%s/%s/actions/runs/%s", strings.TrimRight(server, "/"), repo, id)
		p.runLabel = "run " + id
		if n := e.getenv("GITHUB_RUN_NUMBER"); n != "" {
			p.runLabel = "run #" + n
		}
	}
	return p, nil
}

// readEvent reads and parses an event payload file.
func readEvent(path string) (report.Event, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return report.Event{}, usageError{fmt.Errorf("read event: %w", err)}
	}
	ev, err := report.ParseEvent(data)
	if err != nil {
		return report.Event{}, usageError{fmt.Errorf("%s: %w", path, err)}
	}
	return ev, nil
}

// publish sets a status per lane on the PR head and upserts the comment; it tries every
// write and returns the comment URL and every error.
func (p *publishing) publish(ctx context.Context, rep *report.Report) (string, error) {
	var errs []error
	for _, l := range rep.Lanes {
		if err := p.p.SetStatus(ctx, p.ev.HeadSHA, report.LaneStatus(l, p.runURL)); err != nil {
			errs = append(errs, err)
		}
	}
	url := ""
	if p.ev.Number > 0 {
		c, err := p.p.UpsertComment(ctx, p.ev.Number, rep.Key, report.Comment(rep))
		if err != nil {
			errs = append(errs, err)
		} else {
			url = c.URL
		}
	}
	return url, errors.Join(errs...)
}

// fail turns a publishing error into the exit code: a read-only token is not a failure of
// the report (exit 0 after a notice); anything else could not run (3), with an annotation.
func (p *publishing) fail(e env, err error) (int, error) {
	if errors.Is(err, report.ErrReadOnly) {
		fmt.Fprintln(e.stderr, err)
		if p.inActions {
			e.action().Noticef("%s", readOnlyNotice)
		} else {
			fmt.Fprintln(e.stderr, readOnlyNotice)
		}
		return exitOK, nil
	}
	if p.inActions {
		e.action().Errorf("diffusion-check could not publish to GitHub: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return exitInfra, err
}

// appendSummary appends md to the job summary file.
func appendSummary(e env, md string) error {
	path := e.getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return usagef("--summary needs GITHUB_STEP_SUMMARY (set by GitHub Actions)")
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("job summary: %w", err)
	}
	if _, err := f.WriteString(md + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("job summary %s: %w", path, err)
	}
	return f.Close()
}

// caseGroups prints each case's problems in a collapsible ::group:: of the log.
func caseGroups(e env, group func(string), end func(), l *checks.Result) {
	for _, c := range l.Cases {
		group(fmt.Sprintf("%s %s: %s", l.Lane, c.ID, c.Status))
		for _, rr := range c.Requests {
			fmt.Fprintf(e.stdout, "request %d/%d: %s, e2e %.1f ms\n", rr.Index, rr.Of, rr.Status, rr.E2EMs)
			for _, ck := range rr.Checks {
				fmt.Fprintf(e.stdout, "  %s: %s %s\n", ck.Name, ck.Status, firstLineOf(ck.Detail))
			}
		}
		for _, ck := range c.Checks {
			fmt.Fprintf(e.stdout, "case %s: %s %s\n", ck.Name, ck.Status, firstLineOf(ck.Detail))
		}
		end()
	}
}

func firstLineOf(s string) string {
	f, _, _ := strings.Cut(s, "\n")
	return f
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
