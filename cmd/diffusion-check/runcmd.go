package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/report"
	"github.com/diffusion-check/diffusion-check/runner"
	"github.com/diffusion-check/diffusion-check/runner/suite"
)

func runCmd(ctx context.Context, e env, args []string) (int, error) {
	fs := newFlags("run", e)
	suitePath := fs.String("suite", "", "suite file (YAML)")
	lane := fs.String("lane", "", "run only the cases of this lane (default: all lanes)")
	partition := fs.String("partition", "0/1", "run partition I of N (0-based), as I/N, of the plan `plan --partitions N` makes")
	planPath := fs.String("plan", "", "plan file written by `plan` (default: plan the suite here with N partitions)")
	cases := fs.String("cases", "", "comma-separated case ids to run (default: all of the partition)")
	out := fs.String("out", "diffusion-check-out", "output folder: results.json, requests.jsonl, artifacts/")
	mode := fs.String("mode", "check", "check (baseline and gt arrive with the perf and consistency checks)")
	gpu := fs.String("gpu", "", "GPU class whose baselines apply (default: the suite's)")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() > 0 {
		return 0, usagef("unexpected arguments %q", fs.Args())
	}
	if *suitePath == "" {
		return 0, usagef("--suite is required")
	}
	if *mode != "check" {
		return 0, usagef("--mode %s: only check is supported so far", *mode)
	}
	p, err := parsePartition(*partition)
	if err != nil {
		return 0, err
	}
	s, err := suite.Load(*suitePath)
	if err != nil {
		return 0, usageError{err}
	}
	var plan *runner.Plan
	if *planPath != "" {
		if plan, err = loadPlan(*planPath, s); err != nil {
			return 0, err
		}
		switch {
		case *lane == "":
			*lane = plan.Lane
		case *lane != plan.Lane:
			return 0, usagef("--lane %s, but plan %s is for lane %q", *lane, *planPath, plan.Lane)
		}
	}
	exe, err := executable()
	if err != nil {
		return 0, fmt.Errorf("find own executable for builtin servers: %w", err)
	}
	var ids []string
	if *cases != "" {
		ids = strings.Split(*cases, ",")
	}
	g := *gpu
	if g == "" {
		g = s.GPU
	}
	res, err := runner.Run(ctx, runner.Options{
		Suite: s, Lane: *lane, Partition: p, Plan: plan, Cases: ids, Out: *out, Mode: *mode,
		Commit:     e.getenv("GITHUB_SHA"),
		GPU:        g,
		Executable: exe,
		Environ:    os.Environ(),
		Progress:   e.stderr,
	})
	if err != nil && res == nil {
		return 0, usageError{err}
	}
	if res != nil {
		if terr := report.Table(e.stdout, res); terr != nil {
			return 0, terr
		}
	}
	if err != nil {
		return 0, err
	}
	return checks.ExitCode(res.Status), nil
}

// parsePartition reads "I/N" with 0 ≤ I < N.
func parsePartition(s string) (checks.Partition, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return checks.Partition{}, usagef("--partition %q: want I/N with 0 ≤ I < N, e.g. 0/3", s)
	}
	return checks.Partition{Index: i, Total: n}, nil
}
