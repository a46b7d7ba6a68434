package main

import (
	"context"
	"fmt"
	"strings"
)

// actionCmd is the container action's entrypoint: it maps the action's inputs (INPUT_*) onto
// the same command line a person would type, so the action and the CLI cannot drift apart.
func actionCmd(ctx context.Context, e env, args []string) (int, error) {
	if len(args) > 0 {
		return 0, usagef("action takes its arguments from INPUT_* variables, not %q", args)
	}
	a := e.action()
	in := func(name string) string { return strings.TrimSpace(a.GetInput(name)) }
	command := in("command")
	if command == "" {
		command = "run"
	}
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
	case "run":
		for _, f := range []string{"suite", "lane", "gpu", "partition", "plan", "cases", "profile", "mode", "out"} {
			flag(f, f)
		}
		switch v := in("allow_untrusted"); v {
		case "true":
			argv = append(argv, "--allow-untrusted")
		case "", "false":
		default:
			return 0, usagef("input allow_untrusted: want true or false, got %q", v)
		}
	case "report", "baseline":
		pending := false
		if command == "report" {
			for _, b := range []string{"publish", "pending"} {
				switch v := in(b); v {
				case "true":
					argv = append(argv, "--"+b)
					pending = pending || b == "pending"
				case "", "false":
				default:
					return 0, usagef("input %s: want true or false, got %q", b, v)
				}
			}
			flag("comment-key", "comment_key")
			flag("lane", "lane")
			flag("event", "event")
		} else {
			flag("out", "out")
		}
		results := strings.Fields(in("results"))
		if pending {
			break // statuses only: no results yet
		}
		if len(results) == 0 {
			return 0, usagef("input results: name the results files or folders to %s", command)
		}
		// "--" ends the flags: every word of the input is a path, never an option (a results
		// input of "--publish" names a file called --publish).
		argv = append(append(argv, "--"), results...)
	default:
		return 0, usagef("input command: want plan, run, report or baseline, got %q", command)
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
	return dispatch(ctx, env{getenv: getenv, stdout: e.stdout, stderr: e.stderr}, command, argv)
}
