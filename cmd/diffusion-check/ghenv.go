package main

import (
	"context"
	"fmt"

	"github.com/diffusion-check/diffusion-check/internal/gh"
)

// github is the workflow's environment as one value (internal/gh), read once when the command
// started (newEnv), which every GitHub path of a command takes.
func (e env) github() gh.Env { return e.gh }

// trustedEvent refuses events under which the suite's server commands may be a pull
// request's code with this repository's secrets (gh.Env.TrustRun): a usage error, exit 2.
func trustedEvent(ctx context.Context, e env) error {
	if err := e.github().TrustRun(ctx); err != nil {
		return usageError{err}
	}
	return nil
}

// headCommit is the commit a run tests, as its results record it (gh.Env.HeadCommit);
// report --publish refuses results of another commit than the one it publishes on
// (gh.CheckCommit).
func headCommit(ctx context.Context, e env) string {
	sha, warning := e.github().HeadCommit(ctx)
	if warning != nil {
		fmt.Fprintln(e.stderr, warning)
	}
	return sha
}

// readEvent reads an event payload file (gh.ReadEvent); a bad one is a usage error.
func readEvent(ctx context.Context, path string) (gh.Event, error) {
	ev, err := gh.ReadEvent(ctx, path)
	if err != nil {
		return gh.Event{}, usageError{err}
	}
	return ev, nil
}
