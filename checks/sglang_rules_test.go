package checks

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/results"
)

// The rules of SGLang's diffusion harness, one table each: the rule, the SGLang source it
// follows, the inputs and the verdict SGLang gives. Limits are tested exactly at the limit
// (pass) and one ulp over (fail), with math.Nextafter.

// ruleCase is one input of a rule and the verdict expected of one check.
type ruleCase struct {
	input  string
	checks []results.Check // what the rule's function returned for the input
	check  string          // name of the check that carries the verdict; "name/source" for memory
	want   results.Status  // "" means: the rule makes no such check
	detail string          // a part of the detail, when it matters
}

type ruleTable struct {
	rule, source string
	cases        []ruleCase
}

func up(v float64) float64 { return math.Nextafter(v, math.Inf(1)) }

// ruleBaseline is a scenario with round numbers, so that the limits below can be read.
func ruleBaseline() PerfBaseline {
	return PerfBaseline{
		Scenario: "rules",
		Stages: results.Stages{{Name: "TextEncodingStage", Ms: 232.03}, {Name: "DenoisingStage", Ms: 12404.23}, {Name: "DecodingStage", Ms: 17.7},
			{Name: "per_frame_generation", Ms: math.NaN()}},
		StepsMs:         map[int]float64{0: 196.21, 1: 242.25, 2: 240, 3: 248.9},
		E2EMs:           12799.17,
		AvgDenoiseMs:    247.95,
		MedianDenoiseMs: 249.01,
		Tol:             PerfTolerances{E2E: 0.25, DenoiseStage: 0.25, NonDenoiseStage: 0.8, DenoiseStep: 0.3, DenoiseAgg: 0.2, Load: 0.8},
		StepFractions:   []float64{0, 0.2, 0.4, 0.6, 0.8, 1},
	}
}

func with(f func(*PerfBaseline)) PerfBaseline {
	b := ruleBaseline()
	f(&b)
	return b
}

func runRules(t *testing.T, tables []ruleTable) {
	t.Helper()
	for _, tb := range tables {
		for _, tc := range tb.cases {
			t.Run(tb.rule+"/"+tc.input, func(t *testing.T) {
				var got *results.Check
				for i, c := range tc.checks {
					if c.Name == tc.check || c.Name+"/"+c.Source == tc.check {
						got = &tc.checks[i]
						break
					}
				}
				switch {
				case got == nil && tc.want == "":
				case got == nil:
					t.Fatalf("%s (%s): no check %s in %+v", tb.rule, tb.source, tc.check, tc.checks)
				case tc.want == "":
					t.Fatalf("%s (%s): check %s made, want none: %+v", tb.rule, tb.source, tc.check, *got)
				case got.Status != tc.want || !strings.Contains(got.Detail, tc.detail):
					t.Errorf("%s (%s): %s = %s %q, want %s with %q", tb.rule, tb.source, tc.check, got.Status, got.Detail, tc.want, tc.detail)
				}
			})
		}
	}
}

func steps(v ...float64) results.RequestResult {
	return results.RequestResult{ServerTotalMs: 1, StepsMs: v}
}

func TestSGLangPerfRules(t *testing.T) {
	const validator = "test_server_utils.py @ dd8c5849af99, PerformanceValidator"
	b := ruleBaseline()
	e2eLimit := PerfLimit(12799.17, 0.25, E2EPadMs)
	aggLimit := PerfLimit(247.95, 0.2, AggPadMs)
	medLimit := PerfLimit(249.01, 0.2, AggPadMs)
	step1Limit := PerfLimit(242.25, 0.3, StepPadMs)
	step0Limit := PerfLimit(196.21, Step0Tolerance, Step0PadMs)
	denoiseLimit := PerfLimit(12404.23, 0.25, StagePadMs)
	decodeLimit := PerfLimit(17.7, DecodingTolerance, DecodingPadMs)
	textLimit := PerfLimit(232.03, 0.8, StagePadMs)
	// The mean of these eight steps is 245.01375 with Python 3.12's sum (the exact sum is
	// 1960.11, /8); a naive left-to-right sum gives 245.01375000000002, one ulp more.
	neumaier := []float64{248.22, 243.2, 241.07, 245.14, 249.19, 242.93, 248.94, 241.42}
	atMean := with(func(b *PerfBaseline) { b.AvgDenoiseMs, b.Tol.DenoiseAgg = 225.01375, 0 })
	pf := func(frames int, base float64) PerfBaseline {
		return with(func(b *PerfBaseline) {
			b.Video, b.NumFrames = true, frames
			b.Stages = results.Stages{{Name: "DenoisingStage", Ms: 12404.23}, {Name: PerFrameGeneration, Ms: base}}
		})
	}
	frameLimit := PerfLimit(150, 0.25, framePadMs) // 187.5
	runRules(t, []ruleTable{
		{"upper bound max(b(1+tol), b+pad)", "calculate_upper_bound, " + validator, []ruleCase{
			{"e2e at the limit", Perf(results.RequestResult{ServerTotalMs: e2eLimit}, b), PerfE2E, results.Pass, ""},
			{"e2e one ulp over", Perf(results.RequestResult{ServerTotalMs: up(e2eLimit)}, b), PerfE2E, results.Fail, ""},
			{
				"pad wins: baseline 10, tol 0.25 → 30",
				Perf(results.RequestResult{ServerTotalMs: 30}, with(func(b *PerfBaseline) { b.E2EMs = 10 })),
				PerfE2E,
				results.Pass,
				"limit 30 ms",
			},
			{"pad wins, one ulp over 30", Perf(results.RequestResult{ServerTotalMs: up(30)}, with(func(b *PerfBaseline) { b.E2EMs = 10 })), PerfE2E,
				results.Fail, ""},
		}},
		{"E2E: total_duration_ms > 0", validator + ` ("E2E duration missing"); PR #39206`, []ruleCase{
			{"no record (0)", Perf(results.RequestResult{}, b), PerfE2E, results.Fail, "E2E duration missing"},
			{"negative", Perf(results.RequestResult{ServerTotalMs: -5}, b), PerfE2E, results.Fail, "E2E duration missing"},
			{"NaN", Perf(results.RequestResult{ServerTotalMs: math.NaN()}, b), PerfE2E, results.Fail, "not measured"},
			{"+Inf", Perf(results.RequestResult{ServerTotalMs: math.Inf(1)}, b), PerfE2E, results.Fail, "not a measurement"},
			{"baseline 0", Perf(results.RequestResult{ServerTotalMs: 1}, with(func(b *PerfBaseline) { b.E2EMs = 0 })), PerfE2E, results.Fail,
				"cannot be checked"},
			{"baseline negative", Perf(results.RequestResult{ServerTotalMs: 1}, with(func(b *PerfBaseline) { b.E2EMs = -1 })), PerfE2E, results.Fail,
				"cannot be checked"},
			{"baseline +Inf", Perf(results.RequestResult{ServerTotalMs: 1}, with(func(b *PerfBaseline) { b.E2EMs = math.Inf(1) })), PerfE2E, results.Fail,
				"cannot be checked"},
		}},
		{"mean step: Python 3.12 sum (Neumaier) / len", validator + "; CPython 3.12 builtin_sum_impl", []ruleCase{
			{"at the limit", Perf(steps(aggLimit, aggLimit), b), PerfDenoiseAvg, results.Pass, ""},
			{"one ulp over", Perf(steps(up(aggLimit), up(aggLimit)), b), PerfDenoiseAvg, results.Fail, ""},
			{"compensated sum at the limit (a naive sum is one ulp over)", Perf(steps(neumaier...), atMean), PerfDenoiseAvg, results.Pass, ""},
			{"compensated sum, limit one ulp lower", Perf(steps(neumaier...), with(func(b *PerfBaseline) {
				b.AvgDenoiseMs, b.Tol.DenoiseAgg = math.Nextafter(225.01375, 0), 0
			})), PerfDenoiseAvg, results.Fail, ""},
			{"a negative step", Perf(steps(-300, 200), b), PerfDenoiseAvg, results.Fail, "not a measurement"},
		}},
		{"median step: statistics.median", validator, []ruleCase{
			{"at the limit (even count: mean of the middle two)", Perf(steps(1, medLimit, medLimit, 900), b), PerfDenoiseMedian, results.Pass, ""},
			{"one ulp over", Perf(steps(1, up(medLimit), up(medLimit), 900), b), PerfDenoiseMedian, results.Fail, ""},
		}},
		{"no steps: only mean and median fail", validator + ` ("Denoising step timings missing")`, []ruleCase{
			{"mean", Perf(steps(), b), PerfDenoiseAvg, results.Fail, "Denoising step timings missing"},
			{"median", Perf(steps(), b), PerfDenoiseMedian, results.Fail, "Denoising step timings missing"},
			{"step 0 not checked", Perf(steps(), b), "perf.step.0", "", ""},
			{"step 3 not checked", Perf(steps(), b), "perf.step.3", "", ""},
		}},
		{"sampled steps", validator + ", VideoPerformanceValidator; sample_step_indices, testcase_configs.py @ a53d3636ce05", []ruleCase{
			{"step 1 at the limit", Perf(steps(196, step1Limit, 240, 248), b), "perf.step.1", results.Pass, ""},
			{"step 1 one ulp over", Perf(steps(196, up(step1Limit), 240, 248), b), "perf.step.1", results.Fail, ""},
			{"step 0: tolerance 4, pad 80, at the limit", Perf(steps(step0Limit, 1, 1, 1), b), "perf.step.0", results.Pass, ""},
			{"step 0 one ulp over", Perf(steps(up(step0Limit), 1, 1, 1), b), "perf.step.0", results.Fail, ""},
			{
				"video: pad 160 at the limit",
				Perf(steps(1, 242.25+160, 1, 1), with(func(b *PerfBaseline) { b.Video = true })),
				"perf.step.1",
				results.Pass,
				"pad 160 ms",
			},
			{"video: one ulp over", Perf(steps(1, up(242.25+160), 1, 1), with(func(b *PerfBaseline) { b.Video = true })), "perf.step.1", results.Fail, ""},
			{
				"more steps measured than the baseline has: skipped",
				Perf(steps(1, 1, 1, 1, 1, 1, 1, 1, 1, 9999), b),
				"perf.step.9",
				results.Skip,
				"no baseline for denoise step 9",
			},
		}},
		{"stages", validator + ` ("Stage X timing missing", "Stage metrics missing")`, []ruleCase{
			{
				"DenoisingStage at the limit",
				Perf(results.RequestResult{Stages: results.Stages{{Name: "DenoisingStage", Ms: denoiseLimit}}}, b),
				"perf.stage.DenoisingStage",
				results.Pass,
				"tolerance 25%",
			},
			{
				"DenoisingStage one ulp over",
				Perf(results.RequestResult{Stages: results.Stages{{Name: "DenoisingStage", Ms: up(denoiseLimit)}}}, b),
				"perf.stage.DenoisingStage",
				results.Fail,
				"",
			},
			{
				"DecodingStage: max(tol, 0.9), pad 450, at the limit",
				Perf(results.RequestResult{Stages: results.Stages{{Name: "DecodingStage", Ms: decodeLimit}}}, b),
				"perf.stage.DecodingStage",
				results.Pass,
				"pad 450 ms",
			},
			{"DecodingStage one ulp over", Perf(results.RequestResult{Stages: results.Stages{{Name: "DecodingStage", Ms: up(decodeLimit)}}}, b),
				"perf.stage.DecodingStage", results.Fail, ""},
			{
				"other stage at the limit",
				Perf(results.RequestResult{Stages: results.Stages{{Name: "TextEncodingStage", Ms: textLimit}}}, b),
				"perf.stage.TextEncodingStage",
				results.Pass,
				"tolerance 80%",
			},
			{
				"other stage one ulp over",
				Perf(results.RequestResult{Stages: results.Stages{{Name: "TextEncodingStage", Ms: up(textLimit)}}}, b),
				"perf.stage.TextEncodingStage",
				results.Fail,
				"",
			},
			{
				"baseline stage missing",
				Perf(results.RequestResult{Stages: results.Stages{{Name: "DenoisingStage", Ms: 1}}}, b),
				"perf.stage.DecodingStage",
				results.Fail,
				"Stage DecodingStage timing missing",
			},
			{"no stages at all", Perf(results.RequestResult{}, b), "perf.stage.DenoisingStage", results.Fail, "Stage metrics missing"},
			{"negative stage time", Perf(results.RequestResult{Stages: results.Stages{{Name: "DenoisingStage", Ms: -1}}}, b), "perf.stage.DenoisingStage",
				results.Fail, "not a measurement"},
			{"per_frame_generation is not a stage", Perf(results.RequestResult{Stages: results.Stages{{Name: "DenoisingStage", Ms: 1}}}, b),
				"perf.stage.per_frame_generation", "", ""},
		}},
		{"per_frame_generation: e2e / num_frames", "test_server_utils.py @ dd8c5849af99, VideoPerformanceValidator", []ruleCase{
			// 16 frames: e2e = limit × 16 is exact, so the quotient is the limit itself.
			{"at the limit", Perf(results.RequestResult{ServerTotalMs: frameLimit * 16}, pf(16, 150)), PerfPerFrame, results.Pass, "pad 20 ms"},
			{"one ulp over", Perf(results.RequestResult{ServerTotalMs: up(frameLimit) * 16}, pf(16, 150)), PerfPerFrame, results.Fail, ""},
			{"num_frames not set", Perf(results.RequestResult{ServerTotalMs: 1e9}, pf(0, 150)), PerfPerFrame, "", ""},
			{"baseline null", Perf(results.RequestResult{ServerTotalMs: 1e9}, pf(16, math.NaN())), PerfPerFrame, "", ""},
			{"baseline zero", Perf(results.RequestResult{ServerTotalMs: 1e9}, pf(16, 0)), PerfPerFrame, "", ""},
			{"image: never", Perf(results.RequestResult{ServerTotalMs: 1e9}, with(func(b *PerfBaseline) {
				b.NumFrames = 16
				b.Stages = results.Stages{{Name: PerFrameGeneration, Ms: 150}}
			})), PerfPerFrame, "", ""},
			{"no E2E", Perf(results.RequestResult{}, pf(16, 150)), PerfPerFrame, results.Fail, "not measured"},
		}},
		{"AMD (ROCm): tolerance 1.0, warn only", validator + " (current_platform.is_hip())", []ruleCase{
			{"e2e at 2× + 0", Perf(results.RequestResult{ServerTotalMs: 2 * 12799.17}, with(func(b *PerfBaseline) { b.ROCm = true })), PerfE2E, results.Pass,
				""},
			{
				"e2e over 2×: a warning, not a failure",
				Perf(results.RequestResult{ServerTotalMs: up(2 * 12799.17)}, with(func(b *PerfBaseline) { b.ROCm = true })),
				PerfE2E,
				results.Pass,
				"",
			},
			{"a negative time still fails", Perf(results.RequestResult{ServerTotalMs: -1}, with(func(b *PerfBaseline) { b.ROCm = true })), PerfE2E,
				results.Fail, ""},
			{
				"a missing stage still fails",
				Perf(results.RequestResult{}, with(func(b *PerfBaseline) { b.ROCm = true })),
				"perf.stage.DenoisingStage",
				results.Fail,
				"Stage metrics missing",
			},
		}},
		{"load time: launch → ready against expected_load_ms", "PR #39206", []ruleCase{
			{"at the limit", []results.Check{perfLoadCheck(PerfLimit(50000, 0.8, StagePadMs), 50000, 0.8)}, PerfLoad, results.Pass, ""},
			{"one ulp over", []results.Check{perfLoadCheck(up(PerfLimit(50000, 0.8, StagePadMs)), 50000, 0.8)}, PerfLoad, results.Fail, ""},
			{"negative", []results.Check{perfLoadCheck(-1, 50000, 0.8)}, PerfLoad, results.Fail, "not a measurement"},
		}},
		// SGLang's test_missing_or_invalid_load_duration_fails and
		// test_missing_or_invalid_load_baseline_fails (PR #39206, 2026-09-12), parametrized over
		// None, 0, -1, nan and inf; a missing expected_load_ms is no longer a skip.
		{"load time missing or invalid fails", "PR #39206 test_missing_or_invalid_load_duration_fails", []ruleCase{
			{"missing", []results.Check{perfLoadCheck(math.NaN(), 4000, 0.8)}, PerfLoad, results.Fail, "Load duration missing or invalid"},
			{"zero", []results.Check{perfLoadCheck(0, 4000, 0.8)}, PerfLoad, results.Fail, "Load duration missing or invalid"},
			{"negative", []results.Check{perfLoadCheck(-1, 4000, 0.8)}, PerfLoad, results.Fail, "Load duration missing or invalid"},
			{"infinite", []results.Check{perfLoadCheck(math.Inf(1), 4000, 0.8)}, PerfLoad, results.Fail, "Load duration missing or invalid"},
		}},
		{"load baseline missing or invalid fails", "PR #39206 test_missing_or_invalid_load_baseline_fails", []ruleCase{
			{"missing", []results.Check{perfLoadCheck(4000, math.NaN(), 0.8)}, PerfLoad, results.Fail, "Load baseline missing or invalid"},
			{"zero", []results.Check{perfLoadCheck(4000, 0, 0.8)}, PerfLoad, results.Fail, "Load baseline missing or invalid"},
			{"negative", []results.Check{perfLoadCheck(4000, -1, 0.8)}, PerfLoad, results.Fail, "Load baseline missing or invalid"},
			{"infinite", []results.Check{perfLoadCheck(4000, math.Inf(1), 0.8)}, PerfLoad, results.Fail, "Load baseline missing or invalid"},
		}},
	})
	// The warning is visible: a note that says it is one, with the limit it went over.
	c := find(t, Perf(results.RequestResult{ServerTotalMs: up(2 * 12799.17)}, with(func(b *PerfBaseline) { b.ROCm = true })), PerfE2E)
	if !strings.HasPrefix(c.Note, "warning: over the limit") || *c.Tolerance != 1 {
		t.Errorf("ROCm warning: %+v", c)
	}
}

func TestSGLangMemoryRules(t *testing.T) {
	const guard = "PR #35511 (VRAM guard)"
	b := NoMemoryBaseline()
	b.LoadPeakMiB, b.RuntimePeakMiB = 13120, 24838
	small := NoMemoryBaseline()
	small.LoadPeakMiB, small.RuntimePeakMiB = 1000, 1000
	alloc := b
	alloc.RuntimeAllocatedMiB, alloc.LoadAllocatedMiB = 24001, 12800
	warm := b
	warm.WarmupPeakMiB = 20000
	loadLim := PerfLimit(13120, 0.01, vramPadMiB)  // 13251.2: the tolerance wins
	runLim := PerfLimit(24838, 0.02, vramPadMiB)   // 25334.76
	padLim := PerfLimit(1000, 0.02, vramPadMiB)    // 1128: the pad wins
	allocLim := PerfLimit(24001, 0.02, vramPadMiB) // 24481.02
	warmLim := PerfLimit(20000, 0.02, vramPadMiB)  // 20400
	res := func(v float64) map[string]float64 { return map[string]float64{SourceServerReserved: v} }
	runRules(t, []ruleTable{
		{"VRAM limit max(b(1+tol), b+128 MiB)", guard, []ruleCase{
			{"load at the limit", LoadMemory(res(loadLim), b), "memory.load_peak/server_reserved", results.Pass, ""},
			{"load one ulp over", LoadMemory(res(up(loadLim)), b), "memory.load_peak/server_reserved", results.Fail, ""},
			{"runtime at the limit", RuntimeMemory(res(runLim), b), "memory.runtime_peak/server_reserved", results.Pass, ""},
			{"runtime one ulp over", RuntimeMemory(res(up(runLim)), b), "memory.runtime_peak/server_reserved", results.Fail, ""},
			{"small baseline: the 128 MiB pad, at the limit", RuntimeMemory(res(padLim), small), "memory.runtime_peak/server_reserved", results.Pass,
				"pad 128 MiB"},
			{"small baseline: one ulp over", RuntimeMemory(res(up(padLim)), small), "memory.runtime_peak/server_reserved", results.Fail, ""},
			{"zero peak", RuntimeMemory(res(0), b), "memory.runtime_peak/server_reserved", results.Fail, "peak VRAM metric missing"},
			{"no peak at all", RuntimeMemory(nil, b), "memory.runtime_peak/", results.Fail, "peak VRAM metric missing"},
			{"NVML alone is checked", RuntimeMemory(map[string]float64{SourceNVMLProcess: up(runLim)}, b), "memory.runtime_peak/nvml_process", results.Fail,
				""},
		}},
		{"allocated vs reserved", "PR #38172", []ruleCase{
			{
				"allocated at the limit",
				RuntimeMemory(map[string]float64{SourceServerReserved: 99999, SourceServerAllocated: allocLim}, alloc),
				"memory.runtime_peak/server_allocated",
				results.Pass,
				"",
			},
			{
				"allocated one ulp over",
				RuntimeMemory(map[string]float64{SourceServerReserved: 1, SourceServerAllocated: up(allocLim)}, alloc),
				"memory.runtime_peak/server_allocated",
				results.Fail,
				"",
			},
			{
				"reserved over its limit is only reported",
				RuntimeMemory(map[string]float64{SourceServerReserved: 99999, SourceServerAllocated: 1}, alloc),
				"memory.runtime_peak/server_reserved",
				results.Skip,
				"would be fail",
			},
			{"allocated missing", RuntimeMemory(res(1), alloc), "memory.runtime_peak/server_allocated", results.Fail, "peak VRAM metric missing"},
			{
				"no allocated baseline: allocated not checked",
				RuntimeMemory(map[string]float64{SourceServerReserved: 1, SourceServerAllocated: 1e9}, b),
				"memory.runtime_peak/server_allocated",
				"",
				"",
			},
			{
				"load: the reserved peak is enforced",
				LoadMemory(map[string]float64{SourceServerReserved: up(loadLim), SourceServerAllocated: 1}, alloc),
				"memory.load_peak/server_reserved",
				results.Fail,
				"",
			},
			{
				"load: the allocated peak is reported",
				LoadMemory(map[string]float64{SourceServerReserved: 1, SourceServerAllocated: 1e9}, alloc),
				"memory.load_peak/server_allocated",
				results.Skip,
				"would be fail",
			},
		}},
		{"warmup_peak_vram_mb, when the baseline has it", guard, []ruleCase{
			{"at the limit", WarmupMemory(res(warmLim), warm), "memory.warmup_peak/server_reserved", results.Pass, ""},
			{"one ulp over", WarmupMemory(res(up(warmLim)), warm), "memory.warmup_peak/server_reserved", results.Fail, ""},
			{"no warm-up peak reported", WarmupMemory(nil, warm), "memory.warmup_peak/server_reserved", results.Fail, "peak VRAM metric missing"},
			{"no baseline: no check", WarmupMemory(res(1e9), b), "memory.warmup_peak/server_reserved", "", ""},
		}},
	})
}

// Python 3.12's sum() of floats, on the examples its documentation and Neumaier's paper give,
// and on step lists where it and a naive sum differ.
func TestPySum(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, 1.0}, // What's New in Python 3.12
		{[]float64{1e100, 1.0, -1e100, 1.0}, 2.0},                          // Neumaier's example
		{[]float64{0.1, 0.2, 0.3}, 0.6},
		{[]float64{248.22, 243.2, 241.07, 245.14, 249.19, 242.93, 248.94, 241.42}, 1960.11},
		{[]float64{5}, 5},
		{nil, 0},
		{[]float64{math.Inf(1), 1}, math.Inf(1)}, // the compensation never turns an overflow into NaN
	} {
		if got := pySum(tt.in); got != tt.want {
			t.Errorf("pySum(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	naive := 0.0
	for _, x := range []float64{0.1, 0.2, 0.3} {
		naive += x
	}
	if naive == 0.6 {
		t.Fatal(fmt.Sprint("the naive sum is already exact: the test proves nothing: ", naive))
	}
}

// StepMean and StepMedian agree bit for bit with CPython 3.12's sum(steps)/len(steps) and
// statistics.median(steps), on the lists testdata/pysum_reference.py made with CPython 3.12
// (a third of which a naive sum gets wrong by an ulp or more).
func TestStepMeanMatchesCPython312(t *testing.T) {
	data, err := os.ReadFile("testdata/pysum_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Python string
		Cases  []struct {
			Steps        []float64
			Mean, Median float64
		}
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ref.Python, "3.12") || len(ref.Cases) < 200 {
		t.Fatalf("reference from Python %s with %d cases, want 3.12 and the full set", ref.Python, len(ref.Cases))
	}
	naiveWrong := 0
	for i, c := range ref.Cases {
		if got := StepMean(c.Steps); got != c.Mean {
			t.Errorf("case %d (%d steps): StepMean = %v, CPython %s says %v", i, len(c.Steps), got, ref.Python, c.Mean)
		}
		if got := StepMedian(c.Steps); got != c.Median {
			t.Errorf("case %d: StepMedian = %v, CPython says %v", i, got, c.Median)
		}
		naive := 0.0
		for _, v := range c.Steps {
			naive += v
		}
		if naive/float64(len(c.Steps)) != c.Mean {
			naiveWrong++
		}
	}
	t.Logf("%d step lists agree with CPython %s; a naive sum differs on %d", len(ref.Cases), ref.Python, naiveWrong)
	if naiveWrong == 0 {
		t.Error("no case where a naive sum differs: the reference does not test the compensation")
	}
}
