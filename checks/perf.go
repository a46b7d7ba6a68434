package checks

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
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
)

// The pads of docs/sglang-compat.md §4, in milliseconds, and the fixed tolerances of the special rules.
const (
	E2EPadMs          = 20.0
	AggPadMs          = 20.0
	StepPadMs         = 20.0
	VideoStepPadMs    = 160.0
	Step0Tolerance    = 4.0
	Step0PadMs        = 80.0
	StagePadMs        = 120.0
	DecodingTolerance = 0.9 // at least; a larger stage tolerance wins
	DecodingPadMs     = 450.0
	// DenoisingStage is the stage checked with the denoise_stage tolerance.
	DenoisingStage = "DenoisingStage"
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
	Stages          Stages          // baseline stages; every one of them is checked
	StepsMs         map[int]float64 // denoise step index → ms
	E2EMs           float64
	AvgDenoiseMs    float64
	MedianDenoiseMs float64
	Tol             PerfTolerances
	// StepFractions pick the sampled steps: round(f × (n−1)) of the n measured steps.
	StepFractions []float64
	// ImprovementThreshold: a metric this much (relative) under its baseline gets a Note.
	ImprovementThreshold float64
	// Video selects the video pad of sampled steps.
	Video bool
}

// PerfLimit is docs/sglang-compat.md §4's limit: max(baseline × (1 + tol), baseline + pad).
func PerfLimit(baseline, tol, pad float64) float64 {
	return math.Max(baseline*(1+tol), baseline+pad)
}

// Perf checks one request's timings against its scenario: E2E (the server's own total, as
// SGLang's expected_e2e_ms is), every baseline stage, the sampled denoise steps, and the
// mean and median denoise step. Every check carries value, limit, baseline, tolerance and
// pad. A measurement or baseline that is missing, NaN or zero fails.
func Perf(rr RequestResult, b PerfBaseline) []Check {
	var out []Check
	e2e := math.NaN()
	if rr.ServerTotalMs != 0 {
		e2e = rr.ServerTotalMs
	}
	out = append(out, limitCheck(PerfE2E, "ms", e2e, b.E2EMs, b.Tol.E2E, E2EPadMs, b.ImprovementThreshold, "server total_duration_ms"))
	for _, st := range b.Stages {
		name := PerfStagePrefix + st.Name
		tol, pad := b.Tol.NonDenoiseStage, StagePadMs
		switch {
		case st.Name == DenoisingStage:
			tol = b.Tol.DenoiseStage
		case strings.HasSuffix(st.Name, decodingSuffix):
			tol, pad = math.Max(tol, DecodingTolerance), DecodingPadMs
		}
		if math.IsNaN(st.Ms) {
			got, _ := rr.Stages.Get(st.Name)
			out = append(out, Check{Name: name, Status: Skip, Unit: "ms", Value: finite(got),
				Detail: fmt.Sprintf("the baseline of %s is null (a metric that does not apply): not checked", st.Name)})
			continue
		}
		got, ok := rr.Stages.Get(st.Name)
		if !ok {
			c := limitCheck(name, "ms", math.NaN(), st.Ms, tol, pad, 0, "")
			c.Status, c.Detail = Fail, fmt.Sprintf("Stage %s timing missing: the perf record has no such stage (baseline %s ms)", st.Name, fmtMs(st.Ms))
			out = append(out, c)
			continue
		}
		improve := 0.0
		if st.Name == DenoisingStage {
			improve = b.ImprovementThreshold
		}
		out = append(out, limitCheck(name, "ms", got, st.Ms, tol, pad, improve, ""))
	}
	out = append(out, stepChecks(rr.StepsMs, b)...)
	avg, med := math.NaN(), math.NaN()
	if len(rr.StepsMs) > 0 {
		avg, med = mean(rr.StepsMs), median(rr.StepsMs)
	}
	out = append(out,
		limitCheck(PerfDenoiseAvg, "ms", avg, b.AvgDenoiseMs, b.Tol.DenoiseAgg, AggPadMs, b.ImprovementThreshold, "mean denoise step"),
		limitCheck(PerfDenoiseMedian, "ms", med, b.MedianDenoiseMs, b.Tol.DenoiseAgg, AggPadMs, b.ImprovementThreshold, "median denoise step"))
	return out
}

// stepChecks checks the sampled denoise steps. Step 0 (a warm-up step) has its own rule.
func stepChecks(steps []float64, b PerfBaseline) []Check {
	pad := StepPadMs
	if b.Video {
		pad = VideoStepPadMs
	}
	n := len(steps)
	if n == 0 {
		// Nothing measured: fail every step the baseline would have sampled.
		maxIdx := -1
		for i := range b.StepsMs {
			maxIdx = max(maxIdx, i)
		}
		var out []Check
		for _, i := range SampleSteps(maxIdx+1, b.StepFractions) {
			c := limitCheck(stepName(i), "ms", math.NaN(), b.StepsMs[i], b.Tol.DenoiseStep, pad, 0, "")
			c.Detail = fmt.Sprintf("no denoise steps measured (baseline step %d: %s ms)", i, fmtMs(b.StepsMs[i]))
			out = append(out, c)
		}
		return out
	}
	var out []Check
	for _, i := range SampleSteps(n, b.StepFractions) {
		base, ok := b.StepsMs[i]
		if !ok {
			base = math.NaN()
		}
		tol, p := b.Tol.DenoiseStep, pad
		if i == 0 {
			tol, p = Step0Tolerance, Step0PadMs
		}
		c := limitCheck(stepName(i), "ms", steps[i], base, tol, p, 0, "")
		if !ok {
			c.Detail = fmt.Sprintf("no baseline for denoise step %d (of %d measured) in scenario %s", i, n, b.Scenario)
		}
		out = append(out, c)
	}
	return out
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

// limitCheck compares value with PerfLimit(baseline, tol, pad). A NaN or zero value or
// baseline fails: an enforced metric must never pass silently. improve > 0 adds a Note when
// the value is at least that fraction under the baseline. what names the measurement.
func limitCheck(name, unit string, value, baseline, tol, pad, improve float64, what string) Check {
	c := Check{Name: name, Unit: unit, Baseline: finite(baseline), Tolerance: Float(tol), Pad: Float(pad), Value: finite(value)}
	label := name
	if what != "" {
		label = what
	}
	switch {
	case math.IsNaN(baseline):
		c.Status, c.Detail = Fail, fmt.Sprintf("%s: no baseline value in the baseline file (measured %s %s)", label, fmtNum(value), unit)
		return c
	case baseline == 0 || math.IsInf(baseline, 0):
		c.Status, c.Detail = Fail, fmt.Sprintf("%s: the baseline is %s %s, which cannot be checked; fix or regenerate the baseline (measured %s %s)", label, fmtNum(baseline), unit, fmtNum(value), unit)
		return c
	}
	limit := PerfLimit(baseline, tol, pad)
	c.Limit = Float(limit)
	how := fmt.Sprintf("baseline %s %s, tolerance %s, pad %s %s", fmtNum(baseline), unit, fmtPct(tol), fmtNum(pad), unit)
	switch {
	case math.IsNaN(value):
		c.Status, c.Detail = Fail, fmt.Sprintf("%s: not measured (limit %s %s; %s)", label, fmtNum(limit), unit, how)
	case value == 0 || math.IsInf(value, 0):
		c.Status, c.Detail = Fail, fmt.Sprintf("%s: measured %s %s, which is not a measurement (limit %s %s; %s)", label, fmtNum(value), unit, fmtNum(limit), unit, how)
	case value > limit:
		c.Status, c.Detail = Fail, fmt.Sprintf("%s %s %s > limit %s %s (%s; %s over the baseline)", label, fmtNum(value), unit, fmtNum(limit), unit, how, fmtPct(value/baseline-1))
	default:
		c.Status, c.Detail = Pass, fmt.Sprintf("%s %s %s ≤ limit %s %s (%s)", label, fmtNum(value), unit, fmtNum(limit), unit, how)
		if improve > 0 && value <= baseline*(1-improve) {
			c.Note = fmt.Sprintf("possible improvement: %s %s vs baseline %s %s (%s); consider regenerating the baseline", fmtNum(value), unit, fmtNum(baseline), unit, fmtPct(value/baseline-1))
		}
	}
	return c
}

// PerfLoadCheck checks a server start (launch to ready) against the scenario's
// expected_load_ms with the load tolerance and the stage pad. A NaN baseline (the file has
// no expected_load_ms for the scenario) records the value as a skip: load time is checked
// only where the baseline asks for it.
func PerfLoadCheck(loadMs, baselineMs, tol float64) Check {
	if math.IsNaN(baselineMs) {
		return Check{Name: PerfLoad, Status: Skip, Value: finite(loadMs), Unit: "ms",
			Detail: "no expected_load_ms in the baseline for this scenario: load time recorded, not checked"}
	}
	return limitCheck(PerfLoad, "ms", loadMs, baselineMs, tol, StagePadMs, 0, "server load (launch to ready)")
}

// MissingScenario is the failure of a case whose scenario the baseline file lacks. snippet
// is the measured values in the file's format, ready to paste under "scenarios".
func MissingScenario(file, scenario, snippet string) Check {
	return Check{Name: PerfScenario, Status: Fail,
		Detail: fmt.Sprintf("scenario %q is not in %s; measured values, to paste under \"scenarios\" after review:\n%s", scenario, file, snippet)}
}

// Unenforced turns checks into records: in baseline mode a perf or memory check keeps its
// value and limit but neither passes nor fails. The verdict it would have had goes in Detail.
func Unenforced(cs []Check, why string) []Check {
	for i := range cs {
		if cs[i].Status == Skip {
			continue
		}
		was := cs[i].Status
		cs[i].Status = Skip
		cs[i].Detail = fmt.Sprintf("%s (would be %s): %s", why, was, cs[i].Detail)
	}
	return cs
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// median is Python's statistics.median: the mean of the two middle values for even n.
func median(v []float64) float64 {
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
