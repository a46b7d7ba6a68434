package checks

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/results"
)

// Perf check names. Per-stage and per-step checks append the stage name or step index:
// perf.stage.DenoisingStage, perf.step.10.
const (
	PerfE2E           = "perf.e2e"
	PerfStagePrefix   = "perf.stage."
	PerfStepPrefix    = "perf.step."
	PerfDenoiseAvg    = "perf.denoise_avg"
	PerfDenoiseMedian = "perf.denoise_median"
	PerfLoad          = "perf.load"
	// PerfScenario fails when the baseline file has no scenario for the case.
	PerfScenario = "perf.scenario"
	// PerfPerFrame is the video frame-time check: E2E time / num_frames against the
	// scenario's per_frame_generation.
	PerfPerFrame = "perf.per_frame_generation"
)

// The pads of SGLang's validators (test_server_utils.py), in milliseconds, and the fixed
// tolerances of the special rules.
const (
	E2EPadMs          = 20.0
	AggPadMs          = 20.0
	StepPadMs         = 20.0
	videoStepPadMs    = 160.0
	Step0Tolerance    = 4.0
	Step0PadMs        = 80.0
	StagePadMs        = 120.0
	DecodingTolerance = 0.9 // at least; a larger stage tolerance wins
	DecodingPadMs     = 450.0
	framePadMs        = 20.0
	// rocmTolerance replaces every perf tolerance on AMD GPUs, where SGLang only warns.
	rocmTolerance = 1.0
	// DenoisingStage is SGLang's generic denoising stage; every stage whose name ends in it
	// (DenoisingRole) is checked with the denoise_stage tolerance.
	DenoisingStage = "DenoisingStage"
	// PerFrameGeneration is the stages_ms key SGLang keeps the video frame-time baseline in;
	// it is not a stage and never checked as one.
	PerFrameGeneration = "per_frame_generation"
	// decodingSuffix marks the stages checked with the decoding rule.
	decodingSuffix = "DecodingStage"
)

// PerfTolerances are the relative tolerances of one profile of a baseline file, after env
// and per-scenario overrides.
type PerfTolerances struct {
	E2E             float64
	DenoiseStage    float64
	NonDenoiseStage float64
	DenoiseStep     float64
	DenoiseAgg      float64
	// Load is the tolerance of perf.load (server start to ready against expected_load_ms).
	Load float64
}

// PerfBaseline is what the perf checks of one request compare with: one scenario of a
// baseline file and the tolerances in force. A NaN value means the file does not have it.
type PerfBaseline struct {
	Scenario        string
	Stages          results.Stages  // baseline stages; every one of them is checked
	StepsMs         map[int]float64 // denoise step index → ms
	E2EMs           float64
	AvgDenoiseMs    float64
	MedianDenoiseMs float64
	Tol             PerfTolerances
	// StepFractions pick the sampled steps: round(f × (n−1)) of the n measured steps.
	StepFractions []float64
	// ImprovementThreshold: a metric this much (relative) under its baseline gets a Note.
	ImprovementThreshold float64
	// Video selects the video pad of sampled steps and the per-frame check.
	Video bool
	// NumFrames is the case's num_frames (0: not set); the per-frame check divides the E2E
	// time by it.
	NumFrames int
	// LoadMs is the scenario's expected_load_ms, the baseline of perf.load (PerfLoad); NaN
	// when the file has none.
	LoadMs float64
	// ROCm is SGLang's AMD mode (current_platform.is_hip()): every perf tolerance is
	// rocmTolerance and a value over its limit only warns (see amd).
	ROCm bool
}

// SGLang's harness, which these rules reproduce (paths under python/sglang/multimodal_gen/ in
// github.com/sgl-project/sglang, with the commit that last touched each):
//
//	test/server/test_server_utils.py @ dd8c5849af99: PerformanceValidator, VideoPerformanceValidator
//	test/server/testcase_configs.py  @ a53d3636ce05: ToleranceConfig, sample_step_indices
//	benchmarks/compare_perf.py       @ 6ec77680df1c
//
// Later rules come from SGLang pull requests and their unit tests: #35511 (VRAM guard),
// #38172 (allocated vs reserved), #38457 (timing_tolerance), #39206 (load latency,
// non-positive values).

// PerfLimit is SGLang's calculate_upper_bound (test_server_utils.py @ dd8c5849af99,
// PerformanceValidator): max(baseline × (1 + tol), baseline + pad). A value passes when it is
// ≤ the limit.
func PerfLimit(baseline, tol, pad float64) float64 {
	return math.Max(baseline*(1+tol), baseline+pad)
}

// Perf checks one request's timings against its scenario, in SGLang's validation order: E2E
// (the server's own total, as SGLang's expected_e2e_ms is), the mean and median denoise step,
// the sampled denoise steps, every baseline stage and, for a video, the time per frame.
// SGLang stops at the first failed assertion; Perf makes every check, each with the verdict
// SGLang's assertion would give. Every check carries value, limit, baseline, tolerance and
// pad. A measurement or baseline that is missing, not finite or not positive fails. The AMD
// rule applies (amd).
func Perf(rr results.RequestResult, b PerfBaseline) []results.Check {
	return b.amd(func(b PerfBaseline) []results.Check {
		var out []results.Check
		out = append(out, e2eCheck(rr.ServerTotalMs, b))
		out = append(out, denoiseAggChecks(rr.StepsMs, b)...)
		out = append(out, stepChecks(rr.StepsMs, b)...)
		out = append(out, StageChecks(rr.Stages, b)...)
		if c, ok := perFrameCheck(rr.ServerTotalMs, b); ok {
			out = append(out, c)
		}
		return out
	})
}

// PerfE2EOnly is what SGLang PR #39206 checks on a case with run_perf_check=False: the E2E
// time alone (with the AMD rule, amd), and no stage, step or aggregate: "Require valid
// inference E2E and loading metrics for every diffusion CI case, including
// run_perf_check=False" (its test test_e2e_only_does_not_require_stage_metrics).
func PerfE2EOnly(rr results.RequestResult, b PerfBaseline) []results.Check {
	return b.amd(func(b PerfBaseline) []results.Check { return []results.Check{e2eCheck(rr.ServerTotalMs, b)} })
}

// LoadTime is perf.load of one server start (perfLoadCheck against b.LoadMs with b.Tol.Load),
// with the AMD rule (amd).
func LoadTime(loadMs float64, b PerfBaseline) []results.Check {
	return b.amd(func(b PerfBaseline) []results.Check {
		return []results.Check{perfLoadCheck(loadMs, b.LoadMs, b.Tol.Load)}
	})
}

// amd is SGLang's AMD mode, applied here and nowhere else: on an AMD GPU (b.ROCm) the verdict
// is made with rocmTolerances and its limit failures only warn (warn); elsewhere it is made as
// it is.
func (b PerfBaseline) amd(verdict func(PerfBaseline) []results.Check) []results.Check {
	if !b.ROCm {
		return verdict(b)
	}
	b.Tol = rocmTolerances()
	return warn(verdict(b), rocmWarning)
}

// rocmWarning is why a check passed over its limit on an AMD GPU.
const rocmWarning = "AMD GPU (ROCm): SGLang's harness uses tolerance 1.0 there and only warns"

// rocmTolerances are SGLang's AMD mode (test_server_utils.py @ dd8c5849af99,
// PerformanceValidator, under current_platform.is_hip()): every perf tolerance is 1.0,
// whatever the profile, env and scenario say.
func rocmTolerances() PerfTolerances {
	return PerfTolerances{E2E: rocmTolerance, DenoiseStage: rocmTolerance, NonDenoiseStage: rocmTolerance,
		DenoiseStep: rocmTolerance, DenoiseAgg: rocmTolerance, Load: rocmTolerance}
}

// warn turns the limit failures among cs into warnings, as SGLang's AMD mode logs a warning
// instead of failing the assertion: the check passes, keeps its value and limit, and its Note
// starts with "warning:" and says why. A check that failed for a bad value (missing, not
// finite, not positive) still fails: that is a broken measurement, not a slow one. cs itself
// is not changed.
func warn(cs []results.Check, why string) []results.Check {
	cs = slices.Clone(cs)
	for i := range cs {
		c := &cs[i]
		if c.Status != results.Fail || c.Value == nil || c.Limit == nil || *c.Value <= *c.Limit || *c.Value <= 0 {
			continue
		}
		c.Status = results.Pass
		c.Note = "warning: over the limit, not enforced (" + why + "): " + c.Detail
	}
	return cs
}

// e2eCheck is SGLang's E2E assertion (test_server_utils.py @ dd8c5849af99,
// PerformanceValidator): the record's total_duration_ms against expected_e2e_ms with the e2e
// tolerance and a 20 ms pad; a missing or non-positive value fails ("E2E duration missing").
// 0 is how a request without a perf record carries its server total: not measured.
func e2eCheck(e2eMs float64, b PerfBaseline) results.Check {
	if e2eMs == 0 {
		e2eMs = math.NaN()
	}
	c := limitCheck(PerfE2E, "ms", e2eMs, b.E2EMs, b.Tol.E2E, E2EPadMs, b.ImprovementThreshold, "server total_duration_ms")
	if c.Status == results.Fail && !(e2eMs > 0) {
		c.Detail = "E2E duration missing: " + c.Detail
	}
	return c
}

// denoiseAggChecks are SGLang's mean and median denoise-step assertions
// (test_server_utils.py @ dd8c5849af99, PerformanceValidator): sum(steps)/len(steps), with
// the compensated sum of Python 3.12 that SGLang's CI runs (pySum), and
// statistics.median(steps), each against its baseline with the denoise_agg tolerance and a
// 20 ms pad. No steps fails both ("Denoising step timings missing"), and only these two.
func denoiseAggChecks(steps []float64, b PerfBaseline) []results.Check {
	avg, med := math.NaN(), math.NaN()
	if len(steps) > 0 {
		avg, med = StepMean(steps), StepMedian(steps)
	}
	out := []results.Check{
		limitCheck(PerfDenoiseAvg, "ms", avg, b.AvgDenoiseMs, b.Tol.DenoiseAgg, AggPadMs, b.ImprovementThreshold, "mean denoise step"),
		limitCheck(PerfDenoiseMedian, "ms", med, b.MedianDenoiseMs, b.Tol.DenoiseAgg, AggPadMs, b.ImprovementThreshold, "median denoise step"),
	}
	if len(steps) == 0 {
		for i := range out {
			out[i].Status = results.Fail
			out[i].Detail = "Denoising step timings missing: the perf record has no steps; " + out[i].Detail
		}
	}
	return out
}

// stepChecks are SGLang's sampled-step assertions (test_server_utils.py @ dd8c5849af99,
// PerformanceValidator and VideoPerformanceValidator; sample_step_indices in
// testcase_configs.py @ a53d3636ce05). The steps are sampled over the measured steps; step 0
// (a warm-up step) has tolerance 4.0 and an 80 ms pad, every other sampled step the
// denoise_step tolerance and a 20 ms pad (160 ms in the video validator). A sampled step with
// no baseline entry (the measured step count differs from the baseline's) is skipped, as
// SGLang skips it. No measured steps gives no step check: denoiseAggChecks fails instead.
func stepChecks(steps []float64, b PerfBaseline) []results.Check {
	pad := StepPadMs
	if b.Video {
		pad = videoStepPadMs
	}
	var out []results.Check
	for _, i := range SampleSteps(len(steps), b.StepFractions) {
		base, ok := b.StepsMs[i]
		if !ok {
			out = append(out, results.Check{Name: stepName(i), Status: results.Skip, Unit: "ms", Value: finite(steps[i]),
				Detail: fmt.Sprintf("no baseline for denoise step %d (of %d measured) in scenario %s: not checked, as in SGLang's harness", i,
					len(steps), b.Scenario)})
			continue
		}
		tol, p := b.Tol.DenoiseStep, pad
		if i == 0 {
			tol, p = Step0Tolerance, Step0PadMs
		}
		out = append(out, limitCheck(stepName(i), "ms", steps[i], base, tol, p, 0, ""))
	}
	return out
}

// StageChecks are SGLang's stage assertions (test_server_utils.py @ dd8c5849af99,
// PerformanceValidator, with the stage roles of PR #39206): every baseline stage is checked; a
// stage of the denoising role (DenoisingRole) with the denoise_stage tolerance and a 120 ms
// pad, a name ending in "DecodingStage" with
// max(non_denoise_stage, 0.9) and a 450 ms pad, any other with non_denoise_stage and a 120 ms
// pad. A baseline stage the record lacks fails ("Stage X timing missing"); a record with no
// stages fails every one ("Stage metrics missing"). A null baseline is a metric that does not
// apply (skip); per_frame_generation is not a stage (perFrameCheck).
func StageChecks(got results.Stages, b PerfBaseline) []results.Check {
	var out []results.Check
	for _, st := range b.Stages {
		if st.Name == PerFrameGeneration {
			continue
		}
		name := PerfStagePrefix + st.Name
		tol, pad := b.Tol.NonDenoiseStage, StagePadMs
		switch {
		case DenoisingRole(st.Name):
			tol = b.Tol.DenoiseStage
		case strings.HasSuffix(st.Name, decodingSuffix):
			tol, pad = math.Max(tol, DecodingTolerance), DecodingPadMs
		}
		v, ok := got.Get(st.Name)
		if math.IsNaN(st.Ms) {
			out = append(out, results.Check{Name: name, Status: results.Skip, Unit: "ms", Value: finite(v),
				Detail: fmt.Sprintf("the baseline of %s is null (a metric that does not apply): not checked", st.Name)})
			continue
		}
		if !ok {
			c := limitCheck(name, "ms", math.NaN(), st.Ms, tol, pad, 0, "")
			c.Status, c.Detail = results.Fail, fmt.Sprintf("Stage %s timing missing: the perf record has no such stage (baseline %s ms)", st.Name, fmtMs(st.Ms))
			if len(got) == 0 {
				c.Detail = "Stage metrics missing: the perf record has no stages (baseline " + st.Name + " " + fmtMs(st.Ms) + " ms)"
			}
			out = append(out, c)
			continue
		}
		improve := 0.0
		if DenoisingRole(st.Name) {
			improve = b.ImprovementThreshold
		}
		out = append(out, limitCheck(name, "ms", v, st.Ms, tol, pad, improve, ""))
	}
	return out
}

// DenoisingRole reports whether a stage is a denoising stage, which SGLang PR #39206 checks
// with the denoise_stage tolerance ("apply denoising tolerances by stage role"): before it only
// the exact name "DenoisingStage" was, and model-specific stages (LTX2AVDenoisingStage,
// DmdDenoisingStage, Cosmos3DenoisingStage, 12 of the 63 scenarios of SGLang's h100.json) got
// the non_denoise_stage tolerance. The code of #39206 is not in the sources this project can
// read, only its description; the role is taken as the name's suffix "DenoisingStage", which
// also counts QwenImageLayeredBeforeDenoisingStage, the stricter reading (docs/sglang-compat.md,
// "Verdict rules").
func DenoisingRole(stage string) bool { return strings.HasSuffix(stage, DenoisingStage) }

// perFrameCheck is SGLang's frame-time assertion (test_server_utils.py @ dd8c5849af99,
// VideoPerformanceValidator): for a video whose case sets num_frames, e2e_ms / num_frames
// against stages_ms["per_frame_generation"] with the denoise_stage tolerance and a 20 ms pad.
// SGLang checks it only when the baseline is neither null nor zero; otherwise there is no
// check (ok false), as for an image.
func perFrameCheck(e2eMs float64, b PerfBaseline) (results.Check, bool) {
	base, ok := b.Stages.Get(PerFrameGeneration)
	if !b.Video || b.NumFrames <= 0 || !ok || math.IsNaN(base) || base == 0 {
		return results.Check{}, false
	}
	v := math.NaN()
	if e2eMs > 0 {
		v = e2eMs / float64(b.NumFrames)
	}
	return limitCheck(PerfPerFrame, "ms", v, base, b.Tol.DenoiseStage, framePadMs, 0,
		fmt.Sprintf("time per frame (E2E / %d frames)", b.NumFrames)), true
}

func stepName(i int) string { return PerfStepPrefix + strconv.Itoa(i) }

// SampleSteps returns the step indices that fractions select among n steps, as SGLang's
// sample_step_indices does: round(f × (n−1)) with Python's round (half to even), clamped,
// deduplicated and sorted.
func SampleSteps(n int, fractions []float64) []int {
	if n <= 0 {
		return nil
	}
	maxIdx := n - 1
	var out []int
	for _, f := range fractions {
		i := int(math.RoundToEven(f * float64(maxIdx)))
		i = min(maxIdx, max(0, i))
		if !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	sort.Ints(out)
	return out
}

// limitCheck compares value with PerfLimit(baseline, tol, pad). A value or baseline that is
// NaN, infinite, zero or negative fails, as SGLang PR #39206 made its harness do: an enforced
// metric must never pass silently, and a negative time is not fast, it is broken. improve > 0 adds a Note when
// the value is at least that fraction under the baseline. what names the measurement.
func limitCheck(name, unit string, value, baseline, tol, pad, improve float64, what string) results.Check {
	c := results.Check{Name: name, Unit: unit, Baseline: finite(baseline), Tolerance: Float(tol), Pad: Float(pad), Value: finite(value)}
	label := name
	if what != "" {
		label = what
	}
	switch {
	case math.IsNaN(baseline):
		c.Status, c.Detail = results.Fail, fmt.Sprintf("%s: no baseline value in the baseline file (measured %s %s)", label, fmtNum(value), unit)
		return c
	case baseline <= 0 || math.IsInf(baseline, 0):
		c.Status, c.Detail = results.Fail, fmt.Sprintf("%s: the baseline is %s %s, which cannot be checked; fix or regenerate the baseline (measured %s %s)",
			label, fmtNum(baseline), unit, fmtNum(value), unit)
		return c
	}
	limit := PerfLimit(baseline, tol, pad)
	c.Limit = Float(limit)
	how := fmt.Sprintf("baseline %s %s, tolerance %s, pad %s %s", fmtNum(baseline), unit, fmtPct(tol), fmtNum(pad), unit)
	switch {
	case math.IsNaN(value):
		c.Status, c.Detail = results.Fail, fmt.Sprintf("%s: not measured (limit %s %s; %s)", label, fmtNum(limit), unit, how)
	case value <= 0 || math.IsInf(value, 0):
		c.Status, c.Detail = results.Fail, fmt.Sprintf("%s: measured %s %s, which is not a measurement (limit %s %s; %s)", label, fmtNum(value), unit,
			fmtNum(limit), unit, how)
	case value > limit:
		c.Status, c.Detail = results.Fail, fmt.Sprintf("%s %s %s > limit %s %s (%s; %s over the baseline)", label, fmtNum(value), unit, fmtNum(limit), unit,
			how, fmtPct(value/baseline-1))
	default:
		c.Status, c.Detail = results.Pass, fmt.Sprintf("%s %s %s ≤ limit %s %s (%s)", label, fmtNum(value), unit, fmtNum(limit), unit, how)
		if improve > 0 && value <= baseline*(1-improve) {
			c.Note = fmt.Sprintf("possible improvement: %s %s vs baseline %s %s (%s); consider regenerating the baseline", fmtNum(value), unit,
				fmtNum(baseline), unit, fmtPct(value/baseline-1))
		}
	}
	return c
}

// perfLoadCheck is the load-latency guard of SGLang PR #39206: a server start, from process
// launch until all its workers are ready, the warm-up excluded (the runner's load clock),
// against the scenario's expected_load_ms. A load time that is missing, zero, negative or not
// finite fails "Load duration missing or invalid", and so does a baseline that is missing or
// such a number, "Load baseline missing or invalid" (SGLang's
// test_missing_or_invalid_load_duration_fails, test_missing_or_invalid_load_baseline_fails);
// a baseline run records it unenforced, as every perf check (judge). tol is the profile's
// "load" tolerance, else the E2E one (baselines.Tolerances.LoadTolerance); the pad is the
// 120 ms stage pad (reading: SGLang's validator for it could not be read).
func perfLoadCheck(loadMs, baselineMs, tol float64) results.Check {
	c := limitCheck(PerfLoad, "ms", loadMs, baselineMs, tol, StagePadMs, 0, "server load (launch → all workers ready, warm-up excluded)")
	if c.Status != results.Fail {
		return c
	}
	switch {
	case !(baselineMs > 0) || math.IsInf(baselineMs, 0):
		c.Detail, c.Cause = "Load baseline missing or invalid: "+c.Detail, "load baseline missing or invalid"
	case !(loadMs > 0) || math.IsInf(loadMs, 0):
		c.Detail, c.Cause = "Load duration missing or invalid: "+c.Detail, "load duration missing or invalid"
	}
	return c
}

// PerfRecordJoined is the verdict on a request's performance.log record once it was found: a
// pass naming what it holds, or, when a value is impossible (a negative time or memory
// figure: impossible names each field and value), a failure naming them, since a check that
// passed on such a value would mean nothing. The values stay in the result either way.
func PerfRecordJoined(totalMs float64, stages, steps int, impossible []string) results.Check {
	c := results.Check{Name: results.PerfRecord, Status: results.Pass, Value: finite(totalMs), Unit: "ms",
		Detail: fmt.Sprintf("%d stages, %d denoise steps", stages, steps)}
	if len(impossible) > 0 {
		c.Status = results.Fail
		c.Detail = "impossible values in the perf record: " + strings.Join(impossible, ", ") + " (" + c.Detail + ")"
		c.Cause = "impossible perf record value " + impossible[0]
	}
	return c
}

// MissingScenario is the failure of a case whose scenario the baseline file lacks. snippet
// is the measured values in the file's format, ready to paste under "scenarios".
func MissingScenario(file, scenario, snippet string) results.Check {
	return results.Check{Name: PerfScenario, Status: results.Fail,
		Detail: fmt.Sprintf("scenario %q is not in %s; measured values, to paste under \"scenarios\" after review:\n%s", scenario, file, snippet)}
}

// Unenforced turns checks into records: in baseline mode a perf or memory check keeps its
// value and limit but neither passes nor fails. The verdict it would have had goes in Detail.
// cs itself is not changed.
func Unenforced(cs []results.Check, why string) []results.Check {
	cs = slices.Clone(cs)
	for i := range cs {
		if cs[i].Status == results.Skip {
			continue
		}
		was := cs[i].Status
		cs[i].Status = results.Skip
		cs[i].Detail = fmt.Sprintf("%s (would be %s): %s", why, was, cs[i].Detail)
	}
	return cs
}

// pySum is Python 3.12's sum() of a list of floats, which SGLang's CI runs for the mean
// denoise step: Neumaier's compensated summation as CPython 3.12 implements it
// (Python/bltinmodule.c, builtin_sum_impl): the first value seeds the sum (sum starts at the
// int 0, and 0 + x is x), each later value adds to a running compensation, and the
// compensation is added once at the end when it is non-zero and finite. A naive sum can
// differ from it by an ulp, which decides a verdict exactly at the limit.
func pySum(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sum, c := v[0], 0.0
	for _, x := range v[1:] {
		t := sum + x
		if math.Abs(sum) >= math.Abs(x) {
			c += (sum - t) + x
		} else {
			c += (x - t) + sum
		}
		sum = t
	}
	if c != 0 && !math.IsInf(c, 0) && !math.IsNaN(c) {
		sum += c
	}
	return sum
}

// StepMean is SGLang's mean denoise step, sum(steps) / len(steps) with Python 3.12's sum
// (pySum); NaN for no steps.
func StepMean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	return pySum(v) / float64(len(v))
}

// StepMedian is Python's statistics.median, as SGLang's median denoise step: the middle value,
// or the mean of the two middle values for even n; NaN for no steps.
func StepMedian(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// finite returns a pointer to v, or nil for NaN (JSON cannot hold it).
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return Float(v)
}

func fmtNum(v float64) string {
	if math.IsNaN(v) {
		return "none"
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

func fmtMs(v float64) string { return fmtNum(v) }

func fmtPct(f float64) string {
	return strconv.FormatFloat(math.Round(f*1000)/10, 'f', -1, 64) + "%"
}
