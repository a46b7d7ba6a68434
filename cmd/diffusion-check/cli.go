package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit codes: the contract of DESIGN.md. 0 and 1 and 3 come from a result's status
// (checks.ExitCode); 2 is decided here.
const (
	exitOK    = 0
	exitUsage = 2
	exitInfra = 3
)

// env is what a command may know of its surroundings; nothing outside cmd reads them.
type env struct {
	getenv         func(string) string
	stdout, stderr io.Writer
}

// usageError marks a problem with the command line or configuration (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

const usage = `usage: diffusion-check <command> [flags]

commands:
  run      --suite FILE [--lane L] [--partition I/N] [--cases a,b] [--out DIR]   run a suite
  plan     --suite FILE [--lane L] (--partitions N | --target-minutes M)         split a lane for a job matrix (JSON)
  report   [--publish] [--markdown FILE] [--junit FILE] [--summary] RESULTS...  merge results; print the table; write reports; post the PR comment and statuses
  baseline --out FILE [--from FILE] RESULTS...                                 write a perf baseline file: worst value of every metric
  compare  [--json] GT OUTPUT                                                  SSIM, PSNR and mean abs diff of an image or every video frame
  serve    [--addr HOST:PORT] [--perf-log-dir DIR] [--fault SPEC]...           the built-in reference server
  version                                                                      print the version, the build, NVML and the SSIM kernel

Run "diffusion-check <command> -h" for the flags of a command.
Exit codes: 0 pass, 1 a check failed, 2 usage or configuration error, 3 could not run.
`

// run dispatches a command line and returns the process exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	e := env{getenv: getenv, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "version", "--version":
		return versionCmd(e)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	code, err := dispatch(ctx, e, args[0], args[1:])
	if err == nil {
		return code
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "diffusion-check %s: %s\n", args[0], indent(err.Error()))
	var ue usageError
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case code != exitOK:
		return code
	}
	return exitInfra
}

// dispatch runs one command; the action entrypoint calls it too, with arguments from inputs.
func dispatch(ctx context.Context, e env, name string, args []string) (code int, err error) {
	switch name {
	case "run":
		code, err = runCmd(ctx, e, args)
	case "plan":
		code, err = planCmd(ctx, e, args)
	case "report":
		code, err = reportCmd(ctx, e, args)
	case "serve":
		code, err = serveCmd(ctx, e, args)
	case "compare":
		code, err = compareCmd(ctx, e, args)
	case "baseline":
		code, err = baselineCmd(ctx, e, args)
	case "action":
		code, err = actionCmd(ctx, e, args)
	default:
		return 0, usagef("unknown command %q\n\n%s", name, usage)
	}
	return code, err
}

// indent keeps a multi-error (one problem a line) readable after the command prefix.
func indent(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	return "\n  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name string, e env) *flag.FlagSet {
	fs := flag.NewFlagSet("diffusion-check "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

// parse parses flags, turning a bad flag into a usage error.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	return nil
}

// executable is the path builtin servers are started from: this very binary.
func executable() (string, error) { return os.Executable() }
