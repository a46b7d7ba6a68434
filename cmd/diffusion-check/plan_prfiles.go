package main

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/gh"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/selection"
)

// pullFilesBudget bounds the whole listing of a pull request's files, retries included.
const pullFilesBudget = 2 * time.Minute

// pullChanges reads the changed paths of the workflow event's pull request from GitHub's
// API (--changed-in-pr). The pull request comes from the workflow's own event only. An event
// that is not about a pull request, or a pull request that changes more files than GitHub
// lists, selects every case (sel.All says why).
func pullChanges(ctx context.Context, e env) (sel results.Selection, changed []string, err error) {
	ge := e.github()
	if missing := ge.Missing("GITHUB_TOKEN", "GITHUB_REPOSITORY", "GITHUB_EVENT_PATH"); len(missing) > 0 {
		return sel, nil, usagef("--changed-in-pr needs %s (in a workflow step: the action's github_token input, and pull-requests: read)",
			strings.Join(missing, ", "))
	}
	if _, _, err := ge.OwnerRepo(); err != nil {
		return sel, nil, usageError{err}
	}
	// A schedule or workflow_dispatch has no pull request (and its payload no head commit):
	// there is nothing to select by, which is not an error.
	if !ge.AboutPullRequest() {
		sel.Source = "the workflow's event"
		sel.All = "the event is not about a pull request (" + ge.EventName + "), so there is no change to select by"
		return sel, nil, nil
	}
	ev, err := readEvent(ctx, ge.EventPath)
	if err != nil {
		return sel, nil, err
	}
	if ev.Number == 0 {
		sel.Source = "the workflow's event"
		sel.All = "the event is not about a pull request (" + cmp.Or(ge.EventName, "no GITHUB_EVENT_NAME") + "), so there is no change to select by"
		return sel, nil, nil
	}
	sel.Source = fmt.Sprintf("pull request #%d", ev.Number)
	client, err := githubClient(e, ge, pullFilesBudget, 0) // it only reads
	if err != nil {
		return sel, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, pullFilesBudget)
	defer cancel()
	paths, complete, err := client.PullFiles(ctx, ev.Number)
	if err != nil {
		return sel, nil, err
	}
	sel.ChangedFiles = len(paths)
	if !complete {
		sel.All = fmt.Sprintf("pull request #%d changes %d files or more, and GitHub lists only the first %d", ev.Number, gh.MaxPullFiles, gh.MaxPullFiles)
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
