package runner

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"
)

// PerfOptions configures the perf and memory verdicts of a run.
type PerfOptions struct {
	// Profile is the tolerance profile of the baseline file; empty means pr_test.
	Profile string
	// Overrides are SGLang's env overrides of the profile (read by cmd).
	Overrides baselines.Overrides
	// Today dates the known-failure entries' until; zero means the current date.
	Today time.Time
}

// loadPerf reads the suite's baseline file for the run's GPU class and its known-failures
// file. A configured file that is missing or malformed is an error (a configuration
// problem), except that a baseline run may create the baseline file it cannot find.
func loadPerf(opts Options) (*judge.Config, error) {
	p := &judge.Config{Enforce: opts.Mode.enforces(), Today: opts.Perf.Today, ROCm: baselines.ROCm(opts.GPU)}
	if p.Today.IsZero() {
		p.Today = time.Now()
	}
	s := opts.Suite
	var errs []error
	if s.Baselines != "" {
		path, err := opts.resolved().BaselinesFile(s.Baselines)
		if err == nil {
			p.File, err = baselines.Load(path)
		}
		if err == nil {
			p.File, err = p.File.ForRunner(opts.Resolved.Runner)
		}
		if err == nil {
			p.File, err = p.File.MergeVendors()
		}
		switch {
		case err != nil && !p.Enforce && errors.Is(err, os.ErrNotExist):
			p.File = nil // baseline mode: the file is what this run helps to make
		case err != nil:
			errs = append(errs, err)
		default:
			p.Tol, err = p.File.Tolerances(opts.Perf.Profile, opts.Perf.Overrides)
			if err != nil {
				errs = append(errs, err)
			}
			// The spread is optional: without the sidecar nothing changes.
			if p.Enforce {
				p.Spread, err = baselines.LoadSpread(baselines.SpreadPath(path))
				if err != nil && !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, err)
				}
			}
		}
	}
	if p.File == nil {
		p.Tol = opts.Perf.Overrides.Apply(baselines.Tolerances{LoadPeakVRAM: checks.DefaultLoadPeakTolerance, RuntimePeakVRAM: checks.DefaultRuntimePeakTolerance})
	}
	if s.KnownFailures != "" {
		k, err := baselines.LoadKnown(s.KnownFailures)
		if err != nil {
			errs = append(errs, err)
		}
		p.Known = k
	}
	return p, errors.Join(errs...)
}

// reportKnown says, at the end of the run, what the known-failures entries came to (each
// request and case applied them when it was judged): an entry that matched nothing is a
// warning (its case may be in another partition), and each entry's outcome is told once per
// case, however many requests and checks it matched.
func (r *run) reportKnown(res *results.Result) {
	p := r.judge
	if p == nil || len(p.Known) == 0 {
		return
	}
	for _, e := range checks.UnusedKnown(*res, p.Known) {
		r.logf("known failures: %s (case %s, check %s) matched no check in this run", e.Source, e.Case, e.Check)
	}
	for _, o := range results.KnownOutcomes(*res) {
		r.logf("known failures: %s", o)
	}
}

// runFiles says which data files the run read and why (nil when it read neither), for
// results.json and the report.
func runFiles(opts Options, j *judge.Config, cc *consistencyConfig) *results.Files {
	f := &results.Files{Runner: opts.Resolved.Runner}
	if j.File != nil {
		f.Baselines, f.Pool, f.InPool = j.File.Path, j.File.Pool, j.File.InPool
		f.Warnings = j.File.Warnings
		for _, m := range j.File.Merged {
			f.BaselinesMerged = append(f.BaselinesMerged, m.Path)
		}
		f.BaselinesWhy = cmp.Or(opts.Resolved.Perf.Why, "the suite's baselines")
	}
	if cc.thresholds != nil && cc.thresholds.Path != "" {
		f.Thresholds = cc.thresholds.Path
		f.ThresholdsWhy = cmp.Or(opts.Resolved.Consistency.Why, "the suite's thresholds")
	}
	if st := cc.store; st != nil {
		f.GroundTruth = &results.GroundTruthStore{Repo: st.Repo, Commit: st.Commit, Path: st.Path}
	}
	if f.Baselines == "" && f.Thresholds == "" && f.GroundTruth == nil {
		return nil
	}
	return f
}

// logFiles tells which data files apply, once at the start of the run.
func (r *run) logFiles(f *results.Files) {
	if f == nil {
		return
	}
	if f.Baselines != "" {
		pool := "default pool"
		if f.InPool {
			pool = fmt.Sprintf("runner_overrides pool %q (RUNNER_NAME %q: the first prefix, in file order, it starts with)", f.Pool, f.Runner)
		} else if f.Runner != "" {
			pool = fmt.Sprintf("default pool (RUNNER_NAME %s matches no runner_overrides prefix)", f.Runner)
		}
		r.logf("baselines: %s (%s); %s", f.Baselines, f.BaselinesWhy, pool)
		for _, w := range f.Warnings {
			r.logf("baselines: warning: %s", w)
		}
		if r.judge != nil && r.judge.File != nil {
			for _, m := range r.judge.File.Merged {
				r.logf("baselines: merged %s", m)
			}
		}
	}
	if f.Thresholds != "" {
		r.logf("thresholds: %s (%s)", f.Thresholds, f.ThresholdsWhy)
	}
}

// resolved are the run's data files (Options.Resolved), the GPU class filled in from
// Options.GPU when the caller resolved none (a library caller that names only its GPU).
func (o Options) resolved() baselines.Resolved {
	r := o.Resolved
	r.Class = cmp.Or(r.Class, o.GPU)
	return r
}
