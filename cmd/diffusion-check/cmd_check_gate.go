package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/gh"
)

// gateBudget bounds what check-gate asks of GitHub, retries included.
const gateBudget = 2 * time.Minute

// checkGateCmd fails closed unless the approval environment that holds a fork's pull request
// back from the self-hosted runners exists and requires reviewers (gh.Client.CheckGate): a
// missing environment is created by GitHub on first use with no reviewers, and the job it
// should hold runs at once. An open gate is a configuration error (exit 2, which fail_on
// never tolerates); a GitHub that cannot be asked is exit 3, and the gate is not passed.
func checkGateCmd(ctx context.Context, e env, args []string) (int, error) {
	fs := newFlags("check-gate", e)
	var name string
	fs.StringVar(&name, "environment", "", "the approval environment's `NAME` (the gate job's environment:, e.g. fork-gpu)")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() > 0 {
		return 0, usagef("check-gate takes no arguments, got %q", fs.Args())
	}
	if name == "" {
		return 0, usagef("--environment: name the approval environment")
	}
	ge := e.github()
	if missing := ge.Missing("GITHUB_TOKEN", "GITHUB_REPOSITORY"); len(missing) > 0 {
		return 0, usagef("check-gate needs %s (in a workflow step: the action's github_token input, and permissions: actions: read)", strings.Join(missing, ", "))
	}
	client, err := githubClient(e, ge, gateBudget, 0) // it only reads
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, gateBudget)
	defer cancel()
	gate, err := client.CheckGate(ctx, name)
	if err != nil {
		if ge.Actions {
			e.action().Errorf("diffusion-check check-gate: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		if errors.Is(err, gh.ErrGateOpen) {
			return 0, usageError{err}
		}
		return 0, err
	}
	for _, n := range gate.Notes {
		if ge.Actions {
			e.action().Warningf("diffusion-check check-gate: environment %s: %s", name, n)
		} else {
			fmt.Fprintf(e.stderr, "check-gate: environment %s: %s\n", name, n)
		}
	}
	fmt.Fprintf(e.stdout, "environment %s of %s requires approval by %s\n", name, ge.Repository, strings.Join(gate.Reviewers, ", "))
	return exitOK, nil
}
