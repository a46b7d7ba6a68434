package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
)

// baselineCmd merges results (every partition and repetition) into an SGLang perf baseline
// file that keeps the worst value of every metric, and prints old → new per metric.
func baselineCmd(_ context.Context, e env, args []string) (int, error) {
	fs := newFlags("baseline", e)
	out := fs.String("out", "", "baseline file to write (SGLang perf_baselines/<gpu>.json format)")
	from := fs.String("from", "", "existing baseline file whose tolerances, metadata and other scenarios are kept (default: --out when it exists)")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if *out == "" {
		return 0, usagef("--out is required")
	}
	if fs.NArg() == 0 {
		return 0, usagef("name at least one results.json or folder holding one")
	}
	src := *from
	if src == "" {
		if _, err := os.Stat(*out); err == nil {
			src = *out
		}
	}
	var base *baselines.File
	if src != "" {
		f, err := baselines.Load(src)
		if err != nil {
			return 0, usageError{err}
		}
		base = f
	}
	inputs, err := readResults(fs.Args())
	if err != nil {
		return 0, err
	}
	// The same rules as report: conflicting duplicates are an error, and so is a plan whose
	// partitions did not all arrive — a baseline must not silently drop the cases they held.
	if _, err := checks.Merge(inputs); err != nil {
		return 0, usageError{err}
	}
	var missing []string
	for _, probs := range checks.PlanProblems(inputs) {
		missing = append(missing, probs...)
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return 0, usagef("the results do not cover their plan:\n%s", strings.Join(missing, "\n"))
	}
	var results []*checks.Result
	for _, in := range inputs {
		results = append(results, in.Result)
	}
	reg, err := baselines.Regenerate(base, results)
	if err != nil {
		return 0, err
	}
	for _, w := range reg.Warnings {
		fmt.Fprintln(e.stderr, "warning:", w)
	}
	if len(reg.Changes) == 0 {
		return 0, errors.New("no case in the results has perf measurements; nothing to write")
	}
	if err := os.WriteFile(*out, reg.File.Marshal(), 0o644); err != nil {
		return 0, fmt.Errorf("write baseline: %w", err)
	}
	if err := baselines.WriteChanges(e.stdout, reg.Changes); err != nil {
		return 0, err
	}
	fmt.Fprintf(e.stderr, "wrote %s (%d metrics from %d results files)\n", *out, len(reg.Changes), len(results))
	return exitOK, nil
}
