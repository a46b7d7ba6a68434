package runner

import (
	"errors"
	"os"
	"time"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/judge"
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
		path, err := baselines.Find(s.Baselines, opts.GPU)
		if err == nil {
			p.File, err = baselines.Load(path)
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
func (r *run) reportKnown(res *checks.Result) {
	p := r.judge
	if p == nil || len(p.Known) == 0 {
		return
	}
	for _, e := range checks.UnusedKnown(*res, p.Known) {
		r.logf("known failures: %s (case %s, check %s) matched no check in this run", e.Source, e.Case, e.Check)
	}
	for _, o := range checks.KnownOutcomes(*res) {
		r.logf("known failures: %s", o)
	}
}
