package runner

import (
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/runner/suite"
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

// perfConfig is what the perf, memory and known-failure checks of a run need, loaded once.
type perfConfig struct {
	file    *baselines.File // nil: no baseline file (none configured, or baseline mode without one)
	tol     baselines.Tolerances
	enforce bool // false in baseline mode: checks are recorded, not enforced
	// rocm is SGLang's AMD mode, from the run's GPU class: perf limits only warn.
	rocm  bool
	known []checks.KnownEntry
	today time.Time
	// spread is the baseline file's spread sidecar (baselines.SpreadPath), nil without one.
	spread *baselines.SpreadFile
}

// loadPerf reads the suite's baseline file for the run's GPU class and its known-failures
// file. A configured file that is missing or malformed is an error (a configuration
// problem), except that a baseline run may create the baseline file it cannot find.
func loadPerf(opts Options) (*perfConfig, error) {
	p := &perfConfig{enforce: opts.Mode.enforces(), today: opts.Perf.Today, rocm: baselines.ROCm(opts.GPU)}
	if p.today.IsZero() {
		p.today = time.Now()
	}
	s := opts.Suite
	var errs []error
	if s.Baselines != "" {
		path, err := baselines.Find(s.Baselines, opts.GPU)
		if err == nil {
			p.file, err = baselines.Load(path)
		}
		switch {
		case err != nil && !p.enforce && errors.Is(err, os.ErrNotExist):
			p.file = nil // baseline mode: the file is what this run helps to make
		case err != nil:
			errs = append(errs, err)
		default:
			p.tol, err = p.file.Tolerances(opts.Perf.Profile, opts.Perf.Overrides)
			if err != nil {
				errs = append(errs, err)
			}
			// The spread is optional: without the sidecar nothing changes.
			if p.enforce {
				p.spread, err = baselines.LoadSpread(baselines.SpreadPath(path))
				if err != nil && !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, err)
				}
			}
		}
	}
	if p.file == nil {
		p.tol = opts.Perf.Overrides.Apply(baselines.Tolerances{LoadPeakVRAM: checks.DefaultLoadPeakTolerance, RuntimePeakVRAM: checks.DefaultRuntimePeakTolerance})
	}
	if s.KnownFailures != "" {
		k, err := baselines.LoadKnown(s.KnownFailures)
		if err != nil {
			errs = append(errs, err)
		}
		p.known = k
	}
	return p, errors.Join(errs...)
}

// collecting reports whether perf checks are made at all: against a baseline file, or as
// records in baseline mode.
func (p *perfConfig) collecting() bool { return p != nil && (p.file != nil || !p.enforce) }

func (p *perfConfig) finish(cs []checks.Check) []checks.Check {
	if p.enforce {
		return cs
	}
	return checks.Unenforced(cs, "baseline mode: recorded, not enforced")
}

// perf makes the perf checks of one request: its timings against the case's scenario.
func (r *run) perf(c *suite.Case, rr *checks.RequestResult) []checks.Check {
	p := r.perfCfg
	if c.Realtime != nil {
		return p.realtime(c, rr) // SGLang judges a realtime case on its chunks alone
	}
	if !p.collecting() {
		return nil
	}
	if !suite.Enabled(c.Checks.PerfRecord) {
		return []checks.Check{checks.Skipped(checks.PerfE2E, "no perf record was asked for (checks.perf_record: false), so there are no timings to check")}
	}
	video := c.Modality != suite.Image
	var pb checks.PerfBaseline
	found := false
	if p.file != nil {
		pb, found = p.file.Perf(c.ID, p.tol, video)
	}
	if !found {
		if p.enforce {
			return []checks.Check{checks.MissingScenario(p.file.Path, c.ID, baselines.Snippet(c.ID, *rr))}
		}
		nan := math.NaN()
		pb = checks.PerfBaseline{Scenario: c.ID, E2EMs: nan, AvgDenoiseMs: nan, MedianDenoiseMs: nan, Video: video,
			StepFractions: []float64{0, 0.2, 0.4, 0.6, 0.8, 1}}
	}
	pb.NumFrames, pb.ROCm = c.Request.NumFrames, p.rocm
	if !suite.Enabled(c.Checks.Perf) {
		// SGLang PR #39206: E2E is checked on every case, checks.perf: false (its
		// run_perf_check=False) included.
		return p.finish(p.withSpread(c.ID, checks.PerfE2EOnly(*rr, pb)))
	}
	return p.finish(p.withSpread(c.ID, checks.Perf(*rr, pb)))
}

// casePerf makes the checks that need the whole case: perf.load and memory.load_peak once per
// server start (on the case that paid for it), memory.runtime_peak of every request per
// source, and memory growth from request to request. It runs after every request finished,
// when the memory sampler has recorded its numbers too.
func (r *run) casePerf(c *suite.Case, cr *checks.CaseResult) {
	p := r.perfCfg
	if p == nil {
		return
	}
	paid := cr.Load != nil && !cr.Load.Reused
	mb := r.memoryBaseline(c)
	// Load time is checked on every case, checks.perf: false included (SGLang PR #39206).
	if paid && p.collecting() {
		base, tol := math.NaN(), p.tol.NonDenoiseStage
		if p.file != nil {
			base, tol = p.file.ExpectedLoadMs(c.ID, p.tol)
		}
		if p.rocm {
			tol = checks.ROCmTolerances().Load
		}
		load := []checks.Check{checks.PerfLoadCheck(cr.Load.DurationMs, base, tol)}
		if p.rocm {
			load = checks.Warn(load, checks.ROCmWarning)
		}
		cr.Checks = append(cr.Checks, p.finish(load)...)
	}
	if !suite.Enabled(c.Checks.Memory) {
		return
	}
	if p.rocm {
		r.memoryOffCUDA(c, cr, mb)
		return
	}
	if p.enforce && p.file != nil && suite.Enabled(c.Checks.Perf) {
		if _, found := p.file.Perf(c.ID, p.tol, false); found {
			var load map[string]float64
			if cr.Load != nil {
				load = cr.Load.PeakVRAMMiB
			}
			cr.Checks = append(cr.Checks, checks.MissingVRAMBaseline(p.file.Path, c.ID, mb, load)...)
		}
	}
	if p.collecting() {
		if paid && (len(cr.Load.PeakVRAMMiB) > 0 || !math.IsNaN(mb.LoadPeakMiB)) {
			cr.Checks = append(cr.Checks, p.finish(checks.LoadMemory(cr.Load.PeakVRAMMiB, mb))...)
		}
		if paid {
			cr.Checks = append(cr.Checks, p.finish(checks.WarmupMemory(cr.Load.WarmupPeakVRAMMiB, mb))...)
		}
		for i := range cr.Requests {
			rr := &cr.Requests[i]
			if len(rr.PeakVRAMMiB) == 0 && !perfRecorded(rr) {
				continue // never reached the server: nothing was measured, and other checks say why
			}
			rr.Checks = append(rr.Checks, p.finish(p.withSpread(c.ID, checks.RuntimeMemory(rr.PeakVRAMMiB, mb)))...)
		}
	}
	if n := checks.Growth(cr.Requests, mb.RuntimeTol); n > 0 {
		for i := range cr.Requests {
			rr := &cr.Requests[i]
			for j, ck := range rr.Checks {
				if ck.Name == checks.MemoryRuntimePeak && ck.Status == checks.Fail {
					if !p.enforce {
						p.finish(rr.Checks[j : j+1])
						continue
					}
					r.logf("%s request %d/%d: %s: %s", c.ID, rr.Index, rr.Of, ck.Name, firstLine(ck.Detail))
				}
			}
		}
	}
}

// memoryOffCUDA records the memory of a case on an AMD GPU without a verdict, as SGLang's
// harness checks VRAM only on CUDA: every peak is kept with its limit, as a skip; nothing,
// growth included, fails.
func (r *run) memoryOffCUDA(c *suite.Case, cr *checks.CaseResult, mb checks.MemoryBaseline) {
	if !r.perfCfg.collecting() {
		return
	}
	if cr.Load != nil && !cr.Load.Reused {
		cr.Checks = append(cr.Checks, checks.Unenforced(checks.LoadMemory(cr.Load.PeakVRAMMiB, mb), checks.NoVRAMVerdict)...)
		cr.Checks = append(cr.Checks, checks.Unenforced(checks.WarmupMemory(cr.Load.WarmupPeakVRAMMiB, mb), checks.NoVRAMVerdict)...)
	}
	for i := range cr.Requests {
		rr := &cr.Requests[i]
		if len(rr.PeakVRAMMiB) > 0 {
			rr.Checks = append(rr.Checks, checks.Unenforced(checks.RuntimeMemory(rr.PeakVRAMMiB, mb), checks.NoVRAMVerdict)...)
		}
	}
}

// withSpread records on each check with a value the baseline's spread of its metric, where
// the spread file has one, so that a report can say how far outside it a failure lies.
func (p *perfConfig) withSpread(scenario string, cs []checks.Check) []checks.Check {
	if p.spread == nil {
		return cs
	}
	for i := range cs {
		if cs[i].Value != nil {
			cs[i].Spread = p.spread.For(scenario, cs[i].Name, cs[i].Source)
		}
	}
	return cs
}

// memoryBaseline is the case's memory baselines and tolerances: from the baseline file, or
// none with the run's tolerances (growth is watched all the same).
func (r *run) memoryBaseline(c *suite.Case) checks.MemoryBaseline {
	p := r.perfCfg
	if p.file != nil {
		return p.file.Memory(c.ID, p.tol)
	}
	mb := checks.NoMemoryBaseline()
	mb.LoadTol, mb.RuntimeTol = p.tol.LoadPeakVRAM, p.tol.RuntimePeakVRAM
	return mb
}

// perfRecorded reports whether a request's perf record was joined.
func perfRecorded(rr *checks.RequestResult) bool {
	return slices.ContainsFunc(rr.Checks, func(c checks.Check) bool { return c.Name == checks.PerfRecord && c.Status == checks.Pass })
}

// applyKnown marks the run's checks listed in the suite's known-failures file; an entry that
// matched nothing is reported as a warning (its case may be in another partition).
func (r *run) applyKnown(res *checks.Result) {
	p := r.perfCfg
	if p == nil || len(p.known) == 0 {
		return
	}
	for _, e := range checks.ApplyKnown(res, p.known, p.today) {
		r.logf("known failures: %s (case %s, check %s) matched no check in this run", e.Source, e.Case, e.Check)
	}
	// Once per entry and case, however many requests and checks it matched.
	for _, o := range checks.KnownOutcomes(*res) {
		r.logf("known failures: %s", o)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
