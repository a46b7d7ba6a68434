package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/diffusion-check/diffusion-check/internal/inputfile"
	"github.com/diffusion-check/diffusion-check/plan"
	"github.com/diffusion-check/diffusion-check/suite"
)

// planOptions are the flags of plan.
type planOptions struct {
	suitePath  string
	lane       string
	partitions int
	target     float64
	maxJobs    int
	gpu        string
	sel        selectOptions
}

func (o *planOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.suitePath, "suite", "", "suite `FILE` (YAML)")
	fs.StringVar(&o.lane, "lane", "", "plan only the cases of lane `L` (default: all lanes)")
	fs.IntVar(&o.partitions, "partitions", 0, "number of partitions (jobs) `N`")
	fs.Float64Var(&o.target, "target-minutes", 0, "instead of --partitions: as many partitions as keep each near `M` minutes")
	fs.IntVar(&o.maxJobs, "max-partitions", 10, "upper bound on partitions with --target-minutes")
	fs.StringVar(&o.gpu, "gpu", "", "GPU `CLASS` whose baseline file gives the estimates (default: the suite's)")
	o.sel.register(fs, true)
}

func planCmd(ctx context.Context, e env, args []string) (int, error) {
	var o planOptions
	fs := newFlags("plan", e)
	o.register(fs)
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	switch {
	case o.suitePath == "":
		return 0, usagef("--suite is required")
	case (o.partitions > 0) == (o.target > 0):
		return 0, usagef("give exactly one of --partitions N (≥ 1) or --target-minutes M (> 0)")
	case fs.NArg() > 0:
		return 0, usagef("unexpected arguments %q", fs.Args())
	}
	s, err := suite.Load(o.suitePath)
	if err != nil {
		return 0, usageError{err}
	}
	p, err := o.sel.selectedPlan(ctx, e, s, o.lane, o.gpu, o.partitions, o.target*60, o.maxJobs)
	if err != nil {
		return 0, err
	}
	b, err := json.MarshalIndent(struct {
		*plan.Plan
		Matrix map[string]any `json:"matrix"`
	}{p, p.Matrix()}, "", "  ")
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(e.stdout, "%s\n", b)
	fmt.Fprintf(e.stderr, "plan: %s\n", p)
	// A plan of nothing (every case left out by selection) is one empty partition, which
	// tellSelection explains; "asked for 3, made 1" would only confuse.
	if p.Requested > 0 && len(p.Items) > 0 {
		fmt.Fprintf(e.stderr, "plan: %d partitions asked for, %d made: no more than the cases can fill (at most %d, GitHub's matrix limit)\n",
			p.Requested, p.Total, plan.MaxPartitions)
	}
	for _, id := range p.Defaulted {
		fmt.Fprintf(e.stderr, "plan: case %s has no estimate (no `estimate:`, no baseline); planned with %.0f s\n", id, plan.DefaultEstimate)
	}
	tellSelection(e, p)
	if err := e.setOutputs(map[string]any{"matrix": p.Matrix(), "plan": p}); err != nil {
		return 0, err
	}
	return exitOK, nil
}

// maxPlanBytes bounds a plan file (an artifact of the plan job): a plan of thousands of
// cases is a few MiB.
const maxPlanBytes = 64 << 20

// loadPlan reads a plan written by `plan` and checks it against the suite.
func loadPlan(ctx context.Context, path string, s *suite.Suite) (*plan.Plan, error) {
	b, err := inputfile.Read(ctx, path, maxPlanBytes)
	if err != nil {
		return nil, usageError{err}
	}
	var p plan.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, usagef("plan %s: %v", path, err)
	}
	if p.Schema != plan.Schema {
		return nil, usagef("plan %s: schema %q, want %q", path, p.Schema, plan.Schema)
	}
	if err := p.CheckSuite(s); err != nil {
		return nil, usagef("plan %s: %w", path, err)
	}
	if err := p.CheckSelection(); err != nil {
		return nil, usagef("plan %s: %v", path, err)
	}
	return &p, nil
}
