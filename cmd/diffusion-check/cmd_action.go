package main

import (
	"context"
	"fmt"
	"strings"
)

// defaultReportPath is where the action's report step writes the Markdown report when the
// markdown input is empty: in the workspace, so later steps find it at the report_path output.
const defaultReportPath = "diffusion-check-report.md"

// actionCmd is the container action's entrypoint: it maps the action's inputs (INPUT_*) onto
// the same command line a person would type, so the action and the CLI cannot drift apart,
// and applies fail_on to the exit code.
func actionCmd(ctx context.Context, e env, args []string) (int, error) {
	if len(args) > 0 {
		return 0, usagef("action takes its arguments from INPUT_* variables, not %q", args)
	}
	defer workspaceOwnership(e)() // what the step writes in the checkout ends the workspace owner's
	a := e.action()
	in := func(name string) string { return strings.TrimSpace(a.GetInput(name)) }
	failOn, err := parseFailOn(in("fail_on"))
	if err != nil {
		return 0, err
	}
	command := in("command")
	if command == "" {
		command = "run"
	}
	if command == "check-gate" && failOn != failOnFailures {
		// A gate that an input could pass is no gate.
		return 0, usagef("input fail_on: check-gate always fails closed; remove fail_on from its step")
	}
	argv, err := actionArgs(command, in)
	if err != nil {
		return 0, err
	}
	token := in("github_token")
	if token != "" {
		a.AddMask(token)
	}
	getenv := func(k string) string {
		if k == "GITHUB_TOKEN" && token != "" {
			return token
		}
		return e.getenv(k)
	}
	fmt.Fprintf(e.stderr, "diffusion-check %s %s\n", command, strings.Join(argv, " "))
	inner := newEnv(getenv, e.stdout, e.stderr) // the token input read as GITHUB_TOKEN
	inner.transport, inner.environ = e.transport, e.environ
	code, err := dispatch(ctx, inner, command, argv)
	return failOn.apply(e, code, err)
}

// actionArgs is the command line of a command, from the inputs that apply to it.
func actionArgs(command string, in func(string) string) ([]string, error) {
	var argv []string
	flag := func(name, input string) {
		if v := in(input); v != "" {
			argv = append(argv, "--"+name+"="+v)
		}
	}
	switch command {
	case "plan":
		flag("suite", "suite")
		flag("lane", "lane")
		flag("gpu", "gpu")
		flag("partitions", "partitions")
		flag("target-minutes", "target_minutes")
		if in("target_minutes") != "" {
			flag("max-partitions", "max_partitions")
		}
		switch v := in("select"); v {
		case "", "all":
		case "auto":
			argv = append(argv, "--changed-in-pr")
		default:
			return nil, usagef("input select: want all or auto, got %q", v)
		}
		return argv, nil
	case "run":
		// The run jobs must run the plan job's selection, not plan again without it.
		if in("select") == "auto" && in("plan") == "" {
			return nil, usagef("input select: auto applies to the plan step; give this run step the plan step's plan file (input plan), which holds the selection")
		}
		for _, f := range []string{"suite", "lane", "gpu", "partition", "plan", "cases", "profile", "mode", "out"} {
			flag(f, f)
		}
		if err := boolInput(in, "allow_untrusted", "allow-untrusted", &argv); err != nil {
			return nil, err
		}
		return argv, nil
	case "check-gate":
		flag("environment", "environment")
		return argv, nil
	case "baseline":
		flag("out", "out")
		flag("markdown", "markdown")
		if err := boolInput(in, "allow_failed", "allow-failed", &argv); err != nil {
			return nil, err
		}
	case "report":
		if err := reportArgs(in, flag, &argv); err != nil {
			return nil, err
		}
		if in("pending") == "true" {
			return argv, nil // statuses only: no results yet
		}
	default:
		return nil, usagef("input command: want plan, run, report, baseline or check-gate, got %q", command)
	}
	results := strings.Fields(in("results"))
	if len(results) == 0 {
		return nil, usagef("input results: name the results files or folders to %s", command)
	}
	// "--": a results folder named like a flag stays a folder.
	return append(append(argv, "--"), results...), nil
}

// reportArgs adds the flags of the report command's inputs to argv; flag adds one input's.
func reportArgs(in func(string) string, flag func(name, input string), argv *[]string) error {
	for _, b := range []string{"publish", "pending"} {
		if err := boolInput(in, b, b, argv); err != nil {
			return err
		}
	}
	flag("comment-key", "comment_key")
	flag("comment", "comment_mode")
	flag("write-spacing", "write_spacing")
	flag("retry-budget", "retry_budget")
	flag("history", "history")
	flag("history-url", "history_url")
	switch v := in("job_summary"); v {
	case "", "true": // report's default: on when the job has a summary file
	case "false":
		*argv = append(*argv, "--summary=false")
	default:
		return usagef("input job_summary: want true or false, got %q", v)
	}
	flag("suite", "suite")
	// Always passed: an empty input turns the pictures off.
	*argv = append(*argv, "--pictures-branch="+in("pictures_branch"))
	flag("lane", "lane")
	flag("event", "event")
	flag("junit", "junit")
	md := in("markdown")
	if md == "" {
		md = defaultReportPath
	}
	*argv = append(*argv, "--markdown="+md)
	return nil
}

// boolInput adds --flag when the input is "true"; "" and "false" add nothing.
func boolInput(in func(string) string, input, flag string, argv *[]string) error {
	switch v := in(input); v {
	case "true":
		*argv = append(*argv, "--"+flag)
	case "", "false":
	default:
		return usagef("input %s: want true or false, got %q", input, v)
	}
	return nil
}

// failOn is the action's fail_on input: which outcomes fail the step.
type failOn string

const (
	failOnFailures failOn = "failures" // a failed check (exit 1) or anything that could not run (3)
	failOnErrors   failOn = "errors"   // only what could not run (3): failed checks are reported, not fatal
	failOnNever    failOn = "never"    // neither: the verdict is in the outputs, the comment and the statuses
)

func parseFailOn(s string) (failOn, error) {
	switch f := failOn(s); f {
	case "":
		return failOnFailures, nil
	case failOnFailures, failOnErrors, failOnNever:
		return f, nil
	}
	return "", usagef("input fail_on: want failures, errors or never, got %q", s)
}

// apply turns a command's outcome into the step's: an outcome that fail_on does not fail on
// is printed and exits 0. A usage or configuration error (2) always fails: the action is
// misconfigured, and passing would hide it.
func (f failOn) apply(e env, code int, err error) (int, error) {
	c := code
	if err != nil {
		c = exitCode(err)
	}
	tolerated := (f == failOnErrors && c == exitFailed) || (f == failOnNever && (c == exitFailed || c == exitInfra))
	if !tolerated {
		return code, err
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "diffusion-check: %s\n", indent(err.Error()))
	}
	fmt.Fprintf(e.stderr, "fail_on: %s: exit %d does not fail the step\n", f, c)
	return exitOK, nil
}
