package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/diffusion-check/diffusion-check/runner"
	"github.com/diffusion-check/diffusion-check/runner/suite"
)

func planCmd(_ context.Context, e env, args []string) (int, error) {
	fs := newFlags("plan", e)
	suitePath := fs.String("suite", "", "suite file (YAML)")
	lane := fs.String("lane", "", "plan only the cases of this lane (default: all lanes)")
	partitions := fs.Int("partitions", 0, "number of partitions (jobs)")
	target := fs.Float64("target-minutes", 0, "instead of --partitions: as many partitions as keep each near this many minutes")
	maxJobs := fs.Int("max-partitions", 10, "upper bound on partitions with --target-minutes")
	gpu := fs.String("gpu", "", "GPU class whose baseline file gives the estimates (default: the suite's)")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	switch {
	case *suitePath == "":
		return 0, usagef("--suite is required")
	case (*partitions > 0) == (*target > 0):
		return 0, usagef("give exactly one of --partitions N (≥ 1) or --target-minutes M (> 0)")
	case fs.NArg() > 0:
		return 0, usagef("unexpected arguments %q", fs.Args())
	}
	s, err := suite.Load(*suitePath)
	if err != nil {
		return 0, usageError{err}
	}
	items, err := runner.SuiteItems(s, *lane, *gpu)
	if err != nil {
		return 0, usageError{err}
	}
	n := *partitions
	if *target > 0 {
		n = runner.PartitionsFor(items, *target*60, *maxJobs)
	}
	p := runner.MakePlan(s.Name, *lane, items, n)
	b, err := json.MarshalIndent(struct {
		*runner.Plan
		Matrix map[string]any `json:"matrix"`
	}{p, p.Matrix()}, "", "  ")
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(e.stdout, "%s\n", b)
	fmt.Fprintf(e.stderr, "plan: %s\n", p)
	if p.Requested > 0 {
		fmt.Fprintf(e.stderr, "plan: %d partitions asked for, %d made: no more than the cases can fill (at most %d, GitHub's matrix limit)\n", p.Requested, p.Total, runner.MaxPartitions)
	}
	for _, id := range p.Defaulted {
		fmt.Fprintf(e.stderr, "plan: case %s has no estimate (no `estimate:`, no baseline); planned with %.0f s\n", id, runner.DefaultEstimate)
	}
	if err := e.setOutputs(map[string]any{"matrix": p.Matrix(), "plan": p}); err != nil {
		return 0, err
	}
	return exitOK, nil
}

// loadPlan reads a plan written by `plan` and checks it against the suite.
func loadPlan(path string, s *suite.Suite) (*runner.Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usageError{err}
	}
	var p runner.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, usagef("plan %s: %v", path, err)
	}
	if p.Schema != runner.PlanSchema {
		return nil, usagef("plan %s: schema %q, want %q", path, p.Schema, runner.PlanSchema)
	}
	known := map[string]bool{}
	for _, c := range s.Cases {
		known[c.ID] = true
	}
	for _, pp := range p.Partitions {
		for _, id := range pp.Cases {
			if !known[id] {
				return nil, usagef("plan %s: case %q is not in suite %s", path, id, s.Path)
			}
		}
	}
	return &p, nil
}
