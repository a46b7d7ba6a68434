package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/compare"
	"github.com/diffusion-check/diffusion-check/internal/gh"
	"github.com/diffusion-check/diffusion-check/internal/kernel"
	"github.com/diffusion-check/diffusion-check/internal/untrusted"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/runner"
)

// Exit codes: the contract documented in the README and in `diffusion-check help`. A command's
// verdict gives 0, 1 or 3 when it ran (verdictExit); when it returns an error, exitCode picks
// the code from the error's type.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
	exitInfra  = 3
)

// verdictExit maps a run's status onto the exit code: exitOK for pass, known (known failures
// are allowed) and flaky (failures that did not reproduce, which the suite asked to report as
// flaky), exitFailed for fail, exitInfra for error and cancelled (could not run) and for
// anything else, which a judged run never has. exitUsage (a usage or configuration error) is
// decided before a run.
func verdictExit(s results.Status) int {
	switch s {
	case results.Pass, results.Known, results.Flaky:
		return exitOK
	case results.Fail:
		return exitFailed
	}
	return exitInfra
}

// env is what a command may know of its surroundings; nothing outside cmd reads them.
type env struct {
	getenv func(string) string
	// environ is the environment the servers under test start from (runner.Options.Environ):
	// the process's (os.Environ), read here so that runcmd reads it through env as it reads
	// every variable.
	environ        func() []string
	stdout, stderr io.Writer
	// gh is the workflow's environment, read once from getenv (newEnv).
	gh gh.Env
	// transport carries GitHub API requests (nil: the network); tests give a fake GitHub's.
	transport http.RoundTripper
}

// newEnv is a command's environment: getenv, the workflow's GitHub variables read from it once,
// and the output streams.
//
// Both streams are untrusted.Writers: whatever a command prints (a server's log line, a
// message from a results file) shows its hidden characters as escapes and never runs as a
// workflow command; the command's own workflow commands go to untrusted.Raw of a stream.
func newEnv(getenv func(string) string, stdout, stderr io.Writer) env {
	return env{getenv: getenv, environ: os.Environ, gh: gh.ReadEnv(getenv), stdout: untrusted.NewWriter(stdout), stderr: untrusted.NewWriter(stderr)}
}

// usageError marks a problem with the command line or configuration (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// failedError marks a negative verdict that a command reports as an error, such as an output
// below compare's thresholds (exit 1: it ran, and the answer is no).
type failedError struct{ err error }

func (e failedError) Error() string { return e.err.Error() }
func (e failedError) Unwrap() error { return e.err }

// exitCode is the one place that turns a command's error into its exit code: a usage or
// configuration problem is 2 (a --out that holds an earlier run among them: docs/results.md),
// an output that does not match what it is compared with is 1 (a verdict, not a failure to
// run), anything else could not run (3).
func exitCode(err error) int {
	var ue usageError
	var ce *runner.ConfigError
	var so *results.StaleOutError
	var fe failedError
	var mm *compare.MismatchError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue), errors.As(err, &ce), errors.As(err, &so):
		return exitUsage
	case errors.As(err, &fe), errors.As(err, &mm):
		return exitFailed
	}
	return exitInfra
}

// commandInfo describes a command for the top-level usage, its own -h and the README.
type commandInfo struct {
	name     string
	synopsis string // the arguments after the name
	summary  string
}

// commands lists the commands people run, in the order the usage shows them. The README's
// synopsis is checked against it (TestReadmeSynopsis).
func commands() []commandInfo {
	return []commandInfo{
		{
			"run",
			"--suite FILE [--lane L] [--partition I/N | --plan FILE] [--cases a,b] [--out DIR] [--mode check|baseline|gt] [--gpu CLASS]",
			"run a suite's cases, validate every request, write results.json",
		},
		{
			"plan",
			"--suite FILE [--lane L] (--partitions N | --target-minutes M) [--gpu CLASS] [--changed-files FILE | --changed-since REF | --changed-in-pr]",
			"split a lane into partitions for a job matrix (prints JSON)",
		},
		{
			"report",
			"[--publish] [--comment always|failures|changes|off] [--markdown FILE] [--junit FILE] [--summary] RESULTS...",
			"merge results; print the table; write reports; post the PR comment and statuses",
		},
		{"baseline", "--out FILE [--from FILE] [--markdown FILE] [--allow-failed] RESULTS...", "write a perf baseline file: the worst value of every metric"},
		{
			"compare",
			"[--json] [--min-ssim X] [--min-psnr DB] [--max-mad X] [--min-spectral-similarity X] [--min-waveform-correlation X] [--max-rms-db-diff DB] " +
				"[--max-duration-diff S] [--thresholds PATH --gpu CLASS --case ID] GT OUTPUT [OUTPUT...]",
			"SSIM, PSNR and mean abs diff of an image or every video frame, " +
				"and SGLang's audio metrics of a video's track (GT may be an audio ground truth _audio.wav), optionally against limits; " +
				"several outputs share one decoded ground truth",
		},
		{
			"check-gate",
			"--environment NAME",
			"fail closed unless the approval environment exists and requires reviewers (before a fork reaches self-hosted runners)",
		},
		{
			"history",
			"append|page|tighten|pools --store DIR [--kind default|pr] [--baseline FILE --out FILE --markdown FILE] [RESULTS...]",
			"keep every run's values in a history store; draw its page; propose tighter baselines and runner-pool overrides",
		},
		{
			"sglang-suite",
			"[--sglang-root DIR] [--python PY] [--lists NAME,...] [--gpu CLASS] [--out FILE | --check FILE]",
			"write a suite from SGLang's own case registry (gpu_cases.py), run by SGLang's interpreter, or check a committed one against it",
		},
		{"doctor", "", "check that ffmpeg and ffprobe are present and supported (FFmpeg 4.1 or newer), print their versions; exit 3 saying what to install"},
		{"serve", "[--addr HOST:PORT] [--perf-log-dir DIR] [--fault SPEC]...", "the built-in reference server"},
		{"version", "", "print the version"},
		{"help", "[COMMAND]", "print this help, or a command's flags"},
	}
}

func commandOf(name string) (commandInfo, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return commandInfo{}, false
}

// usage is the top-level help.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: diffusion-check <command> [flags] [arguments]\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-8s %s\n  %-8s   %s\n", c.name, c.synopsis, "", c.summary)
	}
	b.WriteString(`
Flags may come before or after the arguments; "--" ends the flags.
Run "diffusion-check help <command>" (or "<command> -h") for the flags of a command.
Exit codes: 0 pass, 1 a check failed, 2 usage or configuration error, 3 could not run.
`)
	return b.String()
}

// kernelEnv forces the measuring kernels' instruction set (portable, avx2, avx512) instead of
// the widest one the CPU has: to compare kernels, or to rule one out when a result looks wrong.
const kernelEnv = "DIFFUSION_CHECK_KERNEL"

// selectKernel applies $DIFFUSION_CHECK_KERNEL, before any kernel runs.
func selectKernel(getenv func(string) string) error {
	v := getenv(kernelEnv)
	if v == "" {
		return nil
	}
	l, err := kernel.Parse(v)
	if err == nil {
		err = kernel.Force(l)
	}
	if err != nil {
		return fmt.Errorf("%s=%s: %w", kernelEnv, v, err)
	}
	return nil
}

// run dispatches a command line and returns the process exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	e := newEnv(getenv, stdout, stderr)
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return exitUsage
	}
	if err := selectKernel(getenv); err != nil {
		fmt.Fprintf(stderr, "diffusion-check: %s\n", err)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "version", "-version", "--version":
		return versionCmd(e)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && name == "help" {
			// "help run" is "run -h": the command's own flags, on stdout.
			switch _, ok := commandOf(args[1]); {
			case !ok:
				fmt.Fprintf(stderr, "diffusion-check help: unknown command %q; run \"diffusion-check help\" for the list\n", args[1])
				return exitUsage
			case args[1] != "help" && args[1] != "version":
				return run(ctx, []string{args[1], "-h"}, getenv, stdout, stderr)
			}
		}
		fmt.Fprint(stdout, usage())
		return exitOK
	}
	code, err := dispatch(ctx, e, name, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err == nil {
		return code
	}
	// An error may quote a results file or a server: no line of it runs as a workflow command.
	_ = e.untrusted(e.stderr, func() error {
		_, err := fmt.Fprintf(e.stderr, "diffusion-check %s: %s\n", name, indent(err.Error()))
		return err
	})
	return exitCode(err)
}

// dispatch runs one command; the action entrypoint calls it too, with arguments from inputs.
// It returns the command's verdict code, meaningful only when err is nil.
func dispatch(ctx context.Context, e env, name string, args []string) (code int, err error) {
	switch name {
	case "run":
		return runCmd(ctx, e, args)
	case "plan":
		return planCmd(ctx, e, args)
	case "report":
		return reportCmd(ctx, e, args)
	case "serve":
		return serveCmd(ctx, e, args)
	case "compare":
		return compareCmd(ctx, e, args)
	case "baseline":
		return baselineCmd(ctx, e, args)
	case "action":
		return actionCmd(ctx, e, args)
	case "history":
		return historyCmd(ctx, e, args)
	case "doctor":
		return doctorCmd(ctx, e, args)
	case "check-gate":
		return checkGateCmd(ctx, e, args)
	case "sglang-suite":
		return sglangSuiteCmd(ctx, e, args)
	}
	return 0, usagef("unknown command %q; run \"diffusion-check help\" for the list", name)
}

// indent keeps a multi-error (one problem a line) readable after the command prefix.
func indent(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	return "\n  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// newFlags returns a flag set that reports errors instead of exiting, and whose -h prints
// the command's synopsis and flags on stdout.
func newFlags(name string, e env) *flag.FlagSet {
	fs := flag.NewFlagSet("diffusion-check "+name, flag.ContinueOnError)
	// The flag package prints errors and usage itself; run prints the error once instead, and
	// -h prints through fs.Usage.
	fs.SetOutput(io.Discard)
	fs.Usage = func() { printFlags(e.stdout, name, fs) }
	return fs
}

// printFlags prints a command's synopsis and flags, GNU style ("--name VALUE"), as the README
// writes them. A flag's value name is its usage's first `quoted` word (the flag package's
// rule), so usages quote nothing else.
func printFlags(w io.Writer, name string, fs *flag.FlagSet) {
	c, _ := commandOf(name)
	fmt.Fprintf(w, "usage: diffusion-check %s %s\n", name, c.synopsis)
	if c.summary != "" {
		fmt.Fprintf(w, "\n%s.\n", strings.ToUpper(c.summary[:1])+c.summary[1:])
	}
	fmt.Fprintln(w, "\nflags:")
	fs.VisitAll(func(f *flag.Flag) {
		value, text := flag.UnquoteUsage(f)
		head := "--" + f.Name
		if value != "" {
			head += " " + value
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			text += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "  %s\n      %s\n", head, text)
	})
}

// parse parses flags anywhere on the command line ("report res --markdown x.md" is the same as
// "report --markdown x.md res"), turning a bad flag into a usage error. "--" ends the flags.
// The flags are printed (on stdout) only for -h: the flag package would print them for a bad
// flag too, onto stdout, the channel a workflow reads `plan`'s JSON from; the bad flag is a
// usage error that run prints on stderr alone.
func parse(fs *flag.FlagSet, args []string) error {
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(reorder(fs, args))
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return err
	case err != nil:
		return usageError{fmt.Errorf("%w (see %s -h)", err, fs.Name())}
	}
	return nil
}

// reorder moves the flags (with their values) ahead of the positional arguments and puts
// "--" between them, so that the flag package, which stops at the first non-flag, sees them
// all. A flag that is not defined stays a flag, for the flag package to report.
func reorder(fs *flag.FlagSet, args []string) []string {
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case len(a) > 1 && a[0] == '-':
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if strings.Contains(name, "=") {
				continue
			}
			if f := fs.Lookup(name); f != nil && !isBool(f) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
		default:
			positional = append(positional, a)
		}
	}
	return append(append(flags, "--"), positional...)
}

// isBool reports whether a flag takes no value (the flag package's own test).
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// executable is the path builtin servers are started from: this very binary.
func executable() (string, error) { return os.Executable() }

// readInputs reads the results named on a command line (results.ReadAll), telling its
// warnings on stderr, an error among them; every error is the command line's (exit 2).
// A results.json holds the statuses its run judged (the reader refuses one that is not a
// status); one that was rebuilt or completed from requests.jsonl gets its case and run
// statuses here (judge.Settle), from its request lines, which the run judged as it wrote them.
func readInputs(ctx context.Context, e env, args []string) ([]results.Input, error) {
	inputs, warnings, err := results.ReadAll(ctx, args)
	for _, w := range warnings {
		fmt.Fprintf(e.stderr, "warning: %v\n", w)
	}
	if err != nil {
		return nil, usageError{err}
	}
	for _, in := range inputs {
		if in.Result.Incomplete != "" {
			judge.Settle(in.Result)
		}
	}
	return inputs, nil
}

// mergeLanes merges the judged inputs into one result per lane (results.Merge); a lane's
// status is the worst of its cases' and its errors' (judge.LaneStatus), as a run's is.
func mergeLanes(inputs []results.Input) ([]results.Result, error) {
	lanes, err := results.Merge(inputs)
	if err != nil {
		return nil, usageError{err}
	}
	for i := range lanes {
		lanes[i].Status = judge.LaneStatus(&lanes[i])
	}
	return lanes, nil
}
