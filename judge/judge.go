package judge

import (
	"math"
	"slices"
	"time"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// Config is what every verdict of a run knows from its start, loaded once by the runner.
type Config struct {
	// File is the suite's baseline file for the run's GPU class; nil without one (none
	// configured, or a baseline run that makes it).
	File *baselines.File
	// Tol are the tolerances in force: the file's profile with the env overrides, or the
	// defaults without a file.
	Tol baselines.Tolerances
	// Enforce is false in baseline mode: perf and memory checks are recorded, not enforced.
	Enforce bool
	// ROCm is SGLang's AMD mode, from the run's GPU class: perf limits only warn, memory has
	// no verdict.
	ROCm bool
	// Known is the suite's known-failures list; Today dates its entries' until.
	Known []checks.KnownEntry
	Today time.Time
	// Spread is the baseline file's spread sidecar (baselines.SpreadPath), nil without one.
	Spread *baselines.SpreadFile
}

// baselineMode is why a check is recorded, not enforced, in baseline mode.
const baselineMode = "baseline mode: recorded, not enforced"

// Input is one finished request, as measured.
type Input struct {
	Case *suite.Case
	// Request holds the measurements (timings, peaks, output) and the checks made while
	// measuring (server alive, output, consistency, perf record, memory sampler notes).
	Request results.RequestResult
	// Answered reports that the server answered the request with an output, so that its
	// timings are judged; a request that crashed, hung or errored has no timings to judge.
	Answered bool
	// Previous is the request before it in its case (its measurements are all growth
	// needs), nil for the first: for request i, request i−1; for a confirmation request,
	// the confirmation request before it or else the case's last request.
	Previous *results.RequestResult
}

// Verdict is the final judgement of one request.
type Verdict struct {
	// Request is the input's request with its final checks and status.
	Request results.RequestResult
	// Grew are the checks of Request that fail because memory grew since the previous
	// request, for the runner's progress log.
	Grew []results.Check
}

// verdict is a request's judgement as it goes through the rules: the checks made while
// measuring, the checks the rules make, and the sources whose memory grew.
type verdict struct {
	measured, judged []results.Check
	grew             []string
}

// rule is one named step of a request's judgement.
type rule struct {
	name  string
	apply func(j *Config, in Input, v verdict) verdict
}

// requestRules is the order in which a request is judged, written once (the package
// documentation describes each). A new rule is one line here.
func requestRules() []rule {
	return []rule{
		{"perf", perfRule},
		{"memory", memoryRule},
		{"growth", growthRule},
		{"enforcement", enforcementRule},
		{"spread", spreadRule},
		{"known", knownRule},
	}
}

// Request returns the final verdict of one finished request: its checks (the measured ones,
// then the rules' own) and its status. A nil Config judges nothing but the status.
func (j *Config) Request(in Input) Verdict {
	v := verdict{measured: in.Request.Checks}
	if j != nil {
		for _, r := range requestRules() {
			v = r.apply(j, in, v)
		}
	}
	rr := in.Request
	rr.Checks = append(slices.Clone(v.measured), v.judged...)
	if rr.Status != results.Cancelled {
		rr.Status = RequestStatus(rr.Checks)
	}
	out := Verdict{Request: rr}
	for _, c := range rr.Checks {
		if c.Name == checks.MemoryRuntimePeak && c.Status == results.Fail && slices.Contains(v.grew, c.Source) {
			out.Grew = append(out.Grew, c)
		}
	}
	return out
}

// collecting reports whether perf and memory checks are made at all: against a baseline
// file, or as records in baseline mode.
func (j *Config) collecting() bool { return j.File != nil || !j.Enforce }

// perfRule makes the perf checks of a request the server answered: its timings against the
// case's scenario.
func perfRule(j *Config, in Input, v verdict) verdict {
	c := in.Case
	if c.Realtime != nil && in.Answered {
		v.judged = append(v.judged, j.realtime(in)...) // SGLang judges a realtime case on its chunks alone
		return v
	}
	if !j.collecting() || !in.Answered || c.Modality == suite.Text {
		return v // a text case has no diffusion perf record, as in SGLang
	}
	if !suite.Enabled(c.Checks.PerfRecord) {
		v.judged = append(v.judged, checks.Skipped(checks.PerfE2E,
			"no perf record was asked for (checks.perf_record: false), so there are no timings to check"))
		return v
	}
	video := c.Modality != suite.Image
	var pb checks.PerfBaseline
	found := false
	if j.File != nil {
		pb, found = j.File.Perf(c.ID, j.Tol, video)
	}
	if !found {
		if j.Enforce {
			v.judged = append(v.judged, checks.MissingScenario(j.File.Path, c.ID, baselines.Snippet(c.ID, in.Request)))
			return v
		}
		nan := math.NaN()
		pb = checks.PerfBaseline{Scenario: c.ID, E2EMs: nan, AvgDenoiseMs: nan, MedianDenoiseMs: nan, Video: video,
			StepFractions: []float64{0, 0.2, 0.4, 0.6, 0.8, 1}}
	}
	pb.NumFrames, pb.ROCm = c.Request.NumFrames, j.ROCm
	if !suite.Enabled(c.Checks.Perf) {
		// SGLang PR #39206: E2E is checked on every case, checks.perf: false (its
		// run_perf_check=False) included.
		v.judged = append(v.judged, checks.PerfE2EOnly(in.Request, pb)...)
		return v
	}
	v.judged = append(v.judged, checks.Perf(in.Request, pb)...)
	return v
}

// realtime is the perf verdict of a realtime case's request: its chunk metrics against the
// case's thresholds (checks.Realtime), as _validate_realtime_performance (test_server_common.py,
// triple-mu/sglang 2026-08-20) judges it before VRAM; the session's VRAM is judged with the
// case's memory (memoryRule), from the last chunk's record that the runner joined. SGLang
// applies the thresholds whatever run_perf_check says, and so does this (checks.perf does not
// turn them off); baseline mode records them unenforced (enforcementRule).
//
// With checks.perf on, on CUDA, against a baseline file, the case needs its scenario there
// (SGLang: "Testcase '…' not found in" the baseline file); SGLang's own realtime scenario
// holds only the VRAM baselines (h100.json lingbot_world_realtime_plastic_beach), which the
// case's memory checks then need (checks.MissingVRAMBaseline, Config.Case).
func (j *Config) realtime(in Input) []results.Check {
	c := in.Case
	cs := checks.Realtime(in.Request.RealtimeChunks, c.Realtime.IgnoreInitialChunks, c.Realtime.Thresholds)
	if j.Enforce && j.File != nil && !j.ROCm && suite.Enabled(c.Checks.Perf) {
		if _, found := j.File.Perf(c.ID, j.Tol, true); !found {
			cs = append(cs, checks.MissingScenario(j.File.Path, c.ID, baselines.Snippet(c.ID, in.Request)))
		}
	}
	// The session's E2E, against the scenario's expected_e2e_ms, on every realtime case of a
	// file that has its scenario (SGLang PR #39206: E2E on every case, run_perf_check=False
	// included; realtime E2E over the whole session).
	if j.File != nil {
		if pb, found := j.File.Perf(c.ID, j.Tol, true); found {
			pb.ROCm = j.ROCm
			cs = append(cs, checks.RealtimeE2E(in.Request.RealtimeChunks, pb)...)
		}
	}
	return cs
}

// memoryRule makes memory.runtime_peak of every source a request measured.
func memoryRule(j *Config, in Input, v verdict) verdict {
	rr := in.Request
	if !suite.Enabled(in.Case.Checks.Memory) || !j.collecting() {
		return v
	}
	if len(rr.PeakVRAMMiB) == 0 && !perfRecorded(v.measured) {
		return v // never reached the server: nothing was measured, and other checks say why
	}
	v.judged = append(v.judged, j.vram(checks.RuntimeMemory(rr.PeakVRAMMiB, j.memoryBaseline(in.Case)))...)
	return v
}

// growthRule judges the growth of a request's memory since the request before it, even
// without a baseline file; off CUDA memory has no verdict, growth included.
func growthRule(j *Config, in Input, v verdict) verdict {
	if !suite.Enabled(in.Case.Checks.Memory) || j.ROCm || in.Previous == nil {
		return v
	}
	var grew []results.Check
	v.judged, grew = checks.GrowthSince(v.judged, in.Previous.PeakVRAMMiB, in.Request.PeakVRAMMiB, in.Previous.Name(), j.memoryBaseline(in.Case).RuntimeTol)
	for _, c := range grew {
		v.grew = append(v.grew, c.Source)
	}
	return v
}

// enforcementRule records, in baseline mode, every check the rules made instead of
// enforcing it.
func enforcementRule(j *Config, _ Input, v verdict) verdict {
	v.judged = j.enforcement(v.judged)
	return v
}

// spreadRule records on each check with a value the baseline's spread of its metric, where
// the spread file has one, so that a report can say how far outside it a failure lies.
func spreadRule(j *Config, in Input, v verdict) verdict {
	if j.Spread == nil {
		return v
	}
	v.judged = slices.Clone(v.judged)
	for i := range v.judged {
		if c := &v.judged[i]; c.Value != nil {
			c.Spread = j.Spread.For(in.Case.ID, c.Name, c.Source)
		}
	}
	return v
}

// knownRule applies the known-failures entries to every check of one of the case's own
// requests. A confirmation request is left alone: its index is not a request index an entry
// could name, and what it measured is a label of the case's failures, not a failure.
func knownRule(j *Config, in Input, v verdict) verdict {
	if in.Request.Confirm {
		return v
	}
	v.measured = j.MarkKnown(in.Case.ID, in.Request.Index, v.measured)
	v.judged = j.MarkKnown(in.Case.ID, in.Request.Index, v.judged)
	return v
}

// MarkKnown is the known-failures step alone (checks.MarkKnown with the run's list and
// date), for the checks of case caseID's request req (0: its case-level checks); for checks
// no other rule judges, such as those of a server that failed to start.
func (j *Config) MarkKnown(caseID string, req int, cs []results.Check) []results.Check {
	if j == nil {
		return cs
	}
	return checks.MarkKnown(j.Known, caseID, req, cs, j.Today)
}

// Case returns the final case-level checks of a case whose requests have all been judged:
// cr.Checks (what its server start measured) and, for the case that paid for a server
// start, perf.load, memory.load_peak and memory.warmup_peak; on CUDA, the failure of a
// perf-checked scenario without VRAM baselines. The same enforcement and known failures as
// for a request apply.
func (j *Config) Case(c *suite.Case, cr results.CaseResult) []results.Check {
	if j == nil {
		return cr.Checks
	}
	var judged []results.Check
	paid := cr.Load != nil && !cr.Load.Reused
	// Load time is checked on every case, checks.perf: false included (SGLang PR #39206).
	if paid && j.collecting() {
		b := checks.PerfBaseline{Scenario: c.ID, LoadMs: math.NaN(), Tol: checks.PerfTolerances{Load: j.Tol.NonDenoiseStage}, ROCm: j.ROCm}
		if j.File != nil {
			b.LoadMs, b.Tol.Load = j.File.ExpectedLoadMs(c.ID, j.Tol)
		}
		judged = append(judged, checks.LoadTime(cr.Load.DurationMs, b)...)
	}
	if suite.Enabled(c.Checks.Memory) {
		mb := j.memoryBaseline(c)
		// SGLang asks for VRAM baselines only on CUDA, where it makes VRAM verdicts (vram).
		if !j.ROCm && j.Enforce && j.File != nil && suite.Enabled(c.Checks.Perf) {
			if _, found := j.File.Perf(c.ID, j.Tol, false); found {
				var load map[string]float64
				if cr.Load != nil {
					load = cr.Load.PeakVRAMMiB
				}
				judged = append(judged, checks.MissingVRAMBaseline(j.File.Path, c.ID, mb, load)...)
			}
		}
		if paid && j.collecting() {
			judged = append(judged, j.vram(checks.LoadMemory(cr.Load.PeakVRAMMiB, mb))...)
			judged = append(judged, j.vram(checks.WarmupMemory(cr.Load.WarmupPeakVRAMMiB, mb))...)
		}
	}
	return j.MarkKnown(c.ID, 0, append(slices.Clone(cr.Checks), j.enforcement(judged)...))
}

// vram is SGLang's rule for memory verdicts off CUDA: its harness validates peak VRAM only
// under current_platform.is_cuda() (test_server_common.py @ a7ec6b97f786,
// _validate_and_record), so on an AMD GPU every memory check is kept with its value and
// limit, as a skip (checks.NoVRAMVerdict).
func (j *Config) vram(cs []results.Check) []results.Check {
	if !j.ROCm {
		return cs
	}
	return checks.Unenforced(cs, checks.NoVRAMVerdict)
}

// enforcement is baseline mode's rule: a perf or memory check is recorded, not enforced.
func (j *Config) enforcement(cs []results.Check) []results.Check {
	if j.Enforce {
		return cs
	}
	return checks.Unenforced(cs, baselineMode)
}

// memoryBaseline is the case's memory baselines and tolerances: from the baseline file, or
// none with the run's tolerances (growth is watched all the same).
func (j *Config) memoryBaseline(c *suite.Case) checks.MemoryBaseline {
	if j.File != nil {
		return j.File.Memory(c.ID, j.Tol)
	}
	mb := checks.NoMemoryBaseline()
	mb.LoadTol, mb.RuntimeTol = j.Tol.LoadPeakVRAM, j.Tol.RuntimePeakVRAM
	return mb
}

// perfRecorded reports whether the request's performance.log record was joined.
func perfRecorded(measured []results.Check) bool {
	return slices.ContainsFunc(measured, func(c results.Check) bool { return c.Name == results.PerfRecord && c.Status == results.Pass })
}
