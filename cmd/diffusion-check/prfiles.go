package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/report"
	"github.com/diffusion-check/diffusion-check/runner/selection"
)

// pullFilesBudget bounds the whole listing of a pull request's files, retries included.
const pullFilesBudget = 2 * time.Minute

// pullChanges reads the changed paths of the workflow event's pull request from GitHub's
// API (--changed-in-pr). The pull request comes from the workflow's own event only. An event
// that is not about a pull request, or a pull request that changes more files than GitHub
// lists, selects every case (sel.All says why).
func pullChanges(ctx context.Context, e env) (sel checks.Selection, changed []string, err error) {
	var missing []string
	for _, k := range []string{"GITHUB_TOKEN", "GITHUB_REPOSITORY", "GITHUB_EVENT_PATH"} {
		if e.getenv(k) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return sel, nil, usagef("--changed-in-pr needs %s (in a workflow step: the action's github_token input, and pull-requests: read)", strings.Join(missing, ", "))
	}
	repo := e.getenv("GITHUB_REPOSITORY")
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" {
		return sel, nil, usagef("GITHUB_REPOSITORY: want OWNER/NAME, got %q", repo)
	}
	// A schedule or workflow_dispatch has no pull request (and its payload no head commit):
	// there is nothing to select by, which is not an error.
	switch name := e.getenv("GITHUB_EVENT_NAME"); name {
	case "", "pull_request", "pull_request_target", "workflow_run":
	default:
		sel.Source = "the workflow's event"
		sel.All = "the event is not about a pull request (" + name + "), so there is no change to select by"
		return sel, nil, nil
	}
	ev, err := readEvent(ctx, e.getenv("GITHUB_EVENT_PATH"))
	if err != nil {
		return sel, nil, err
	}
	if ev.Number == 0 {
		sel.Source = "the workflow's event"
		sel.All = "the event is not about a pull request (" + eventName(e) + "), so there is no change to select by"
		return sel, nil, nil
	}
	sel.Source = fmt.Sprintf("pull request #%d", ev.Number)
	client, err := githubClient(e, e.getenv("GITHUB_TOKEN"), pullFilesBudget)
	if err != nil {
		return sel, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, pullFilesBudget)
	defer cancel()
	pub := &report.Publisher{Client: client, Owner: owner, Repo: name}
	paths, complete, err := pub.PullFiles(ctx, ev.Number)
	if err != nil {
		return sel, nil, err
	}
	sel.ChangedFiles = len(paths)
	if !complete {
		sel.All = fmt.Sprintf("pull request #%d changes %d files or more, and GitHub lists only the first %d", ev.Number, report.MaxPullFiles, report.MaxPullFiles)
		return sel, nil, nil
	}
	// File names are the pull request's to choose: refuse what is not a plain path before it
	// reaches a log line, a plan or the PR comment.
	for _, p := range paths {
		if why := selection.ValidPath(p); why != "" {
			return sel, nil, usagef("pull request #%d: a changed file name: %s", ev.Number, why)
		}
	}
	return sel, paths, nil
}

// eventName is the workflow's event name for messages.
func eventName(e env) string {
	if n := e.getenv("GITHUB_EVENT_NAME"); n != "" {
		return n
	}
	return "no GITHUB_EVENT_NAME"
}
