package gh

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The rules of what each event may be trusted with, in one place: which events may start a
// suite's server commands (TrustRun), which event says where to publish (Events), when a
// 403 means a fork's read-only token (ReadOnlyFork), and which commit a run tests
// (HeadCommit). Target and CheckCommit (target.go) add what needs the API.

// TrustedEvents are the events under which run starts the suite's server commands without
// --allow-untrusted: the suite is then the base branch's, or a pull request's whose job
// holds no secrets and a read-only token (pull_request from a fork). Any other event —
// pull_request_target, issue_comment, pull_request_review, pull_request_review_comment, an
// event not listed — is refused: it fails closed.
var TrustedEvents = []string{"push", "pull_request", "merge_group", "schedule", "workflow_dispatch", "repository_dispatch", "release"}

// ErrUntrusted marks an event under which the suite's server commands may be a pull
// request's code running with this repository's secrets and write token.
var ErrUntrusted = errors.New("refusing to run")

// TrustRun refuses events under which the suite (and so its server commands) may be a
// pull request's code while the job holds this repository's secrets and write token. A
// workflow_run is trusted only when its payload shows it ran in this repository (a
// head_repository equal to the repository); without GITHUB_EVENT_NAME (which GitHub always
// sets) it is not a GitHub event but a person's run, and it is trusted.
func (e Env) TrustRun(ctx context.Context) error {
	const risk = "the suite's server commands would run code from the pull request with this repository's secrets and write token (and on its self-hosted runners)"
	const optIn = "pass --allow-untrusted (action input allow_untrusted: \"true\") " +
		"only if the suite comes from the base branch and a maintainer has reviewed the change"
	name := e.EventName
	switch {
	case name == "":
		// Not a GitHub event (GitHub always names it): a person's run, or another CI.
		return nil
	case slices.Contains(TrustedEvents, name):
		return nil
	case name == "workflow_run":
		ev, err := ReadEvent(ctx, e.EventPath)
		switch {
		case err != nil:
			return fmt.Errorf(
				"%w under workflow_run: cannot tell whether a fork triggered it (%v); %s",
				ErrUntrusted,
				err, //nolint:errorlint // the sentinel decides
				optIn,
			)
		case ev.HeadRepo == "" || ev.Repo == "":
			return fmt.Errorf("%w under workflow_run: its payload names no head_repository (or no repository), so a fork may have triggered it; %s",
				ErrUntrusted, optIn)
		case ev.FromFork():
			return fmt.Errorf("%w under workflow_run triggered from the fork %s: %s; %s", ErrUntrusted, ev.HeadRepo, risk, optIn)
		}
		return nil
	}
	return fmt.Errorf("%w under %s: %s (only %s are trusted); %s", ErrUntrusted, name, risk, strings.Join(TrustedEvents, ", "), optIn)
}

// pullRequestEvents are the events whose payload names a pull request (directly, or for
// workflow_run the run's).
var pullRequestEvents = []string{"pull_request", "pull_request_target", "workflow_run"}

// AboutPullRequest says whether the workflow's event may name a pull request: "" (not
// GitHub, the event file decides) or one of pullRequestEvents. A schedule or
// workflow_dispatch has none (and its payload no head commit).
func (e Env) AboutPullRequest() bool {
	return e.EventName == "" || slices.Contains(pullRequestEvents, e.EventName)
}

// HeadCommit is the commit a run tests, as its results record it: for a pull request the
// head commit of the workflow's own event (GITHUB_SHA is then a merge commit that no status
// goes on), else GITHUB_SHA. A warning says why an event that should name it did not.
func (e Env) HeadCommit(ctx context.Context) (sha string, warning error) {
	if slices.Contains(pullRequestEvents, e.EventName) {
		ev, err := ReadEvent(ctx, e.EventPath)
		if err == nil {
			return ev.HeadSHA, nil
		}
		return e.SHA, fmt.Errorf("commit: %w; recording GITHUB_SHA", err)
	}
	return e.SHA, nil
}

// Events reads the events that decide where to publish. The workflow's own event
// (GITHUB_EVENT_PATH) is the only one trusted to say it; uploadedPath (report --event: an
// uploaded artifact, which a pull request's code may have written) is only checked against
// it (Target). Outside Actions there is no own event: uploadedPath is all there is, and
// trusted. No path at all is an error naming what is missing.
func (e Env) Events(ctx context.Context, uploadedPath string) (trusted Event, uploaded *Event, err error) {
	trustedPath := e.EventPath
	if trustedPath == "" {
		trustedPath, uploadedPath = uploadedPath, ""
	}
	if trustedPath == "" {
		return Event{}, nil, errors.New("no event: GITHUB_EVENT_PATH or --event")
	}
	if trusted, err = ReadEvent(ctx, trustedPath); err != nil {
		return Event{}, nil, err
	}
	if uploadedPath != "" {
		ev, err := ReadEvent(ctx, uploadedPath)
		if err != nil {
			return Event{}, nil, err
		}
		uploaded = &ev
	}
	return trusted, uploaded, nil
}

// ReadOnlyFork says whether the token of t's run is a fork's read-only one: a fork's
// pull_request run holds one; pull_request_target and workflow_run (even of a fork's pull
// request) run with this repository's token, so a 403 there is a missing permission.
func (e Env) ReadOnlyFork(t Target) bool {
	return t.FromFork() && !t.WorkflowRun && e.EventName != "pull_request_target"
}
