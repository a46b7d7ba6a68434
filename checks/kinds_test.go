package checks

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/results"
)

// TestKindsCoverVerdicts runs every verdict function and requires each check it makes to be
// registered, with the unit the verdict writes: a check added without a kind fails here.
func TestKindsCoverVerdicts(t *testing.T) {
	nan := math.NaN()
	rr := results.RequestResult{Index: 2, ServerTotalMs: 1500, Stages: results.Stages{{Name: "DenoisingStage", Ms: 900}}, StepsMs: []float64{100, 90, 95}}
	pb := PerfBaseline{Stages: results.Stages{{Name: "DenoisingStage", Ms: 800}}, StepsMs: map[int]float64{0: 90, 1: 80, 2: 80},
		E2EMs: 1400, AvgDenoiseMs: 85, MedianDenoiseMs: 85, StepFractions: []float64{0, 1}, Tol: PerfTolerances{E2E: 0.05}}
	peaks := map[string]float64{SourceServerReserved: 1000, SourceNVMLProcess: 1200, SourceServerAllocated: 900, SourceHostAnon: 50}
	mb := MemoryBaseline{
		LoadPeakMiB:         1000,
		RuntimePeakMiB:      1000,
		LoadAllocatedMiB:    900,
		RuntimeAllocatedMiB: 900,
		LoadHostAnonMiB:     50,
		RuntimeHostAnonMiB:  50,
		WarmupPeakMiB:       1100,
		LoadTol:             0.01,
		RuntimeTol:          0.02,
	}
	frames := []FrameScore{{Index: 0, SSIM: 0.9, PSNR: 30, MeanAbsDiff: 2}}
	var all []results.Check
	all = append(all, Perf(rr, pb)...)
	all = append(all, perfLoadCheck(5000, 4000, 0.1), perfLoadCheck(5000, nan, 0.1), MissingScenario("b.json", "s", "{}"))
	all = append(all, LoadMemory(peaks, mb)...)
	all = append(all, RuntimeMemory(peaks, mb)...)
	all = append(all, Consistency(frames, 1, ConsistencyLimits{SSIM: 0.9, PSNR: 25, MeanAbsDiff: 5})...)
	all = append(all, CLIP([]float64{0.95}, []int{0}, 1, ConsistencyLimits{CLIP: 0.9}))
	all = append(
		all,
		AudioConsistency(AudioScores{0.9, 0.8, 1, 0.1}, AudioLimits{SpectralSimilarity: 0.8, WaveformCorrelation: 0.7, RMSdBDiff: 3, DurationDiffS: 0.5})...)
	all = append(all, AudioFailed("no audio")...)
	all = append(all, Repeat(frames, 1, DefaultRepeatLimits())...)
	all = append(all, RepeatAudio(AudioScores{1, 1, 0, 0}, DefaultRepeatLimits())...)
	all = append(all, RepeatFailed("size differs", false)...)
	all = append(all, RepeatFailed("no audio", true)...)
	all = append(all, Realtime([]results.ChunkStats{{ChunkTotalMs: 10}}, 0, map[string]float64{"p95_chunk_total_ms": 5, "avg_nope": 1})...)
	all = append(all, Realtime(nil, 0, map[string]float64{"p95_chunk_total_ms": 5})...)
	for _, name := range []string{
		results.ServerAlive, results.OutputPresent, results.OutputValid, results.PerfRecord, ConsistencyGroup, AudioGroup, GroundTruthWrite, MemorySampler,
		RepeatGroup,
	} {
		all = append(all, Passed(name, ""))
	}
	for _, c := range all {
		k := KindOf(c.Name)
		if !k.Registered {
			t.Errorf("check %s has no kind: register it in checks/kinds.go", c.Name)
			continue
		}
		if c.Unit != "" && c.Unit != k.Unit {
			t.Errorf("check %s is written in %q but its kind says %q", c.Name, c.Unit, k.Unit)
		}
	}
}

func TestKindOf(t *testing.T) {
	type view struct {
		Title, Op  string
		Group      Group
		Column     Column
		Registered bool
	}
	for name, want := range map[string]view{
		"perf.e2e":                    {"E2E (server)", "≤", GroupPerf, ColumnE2E, true},
		"perf.stage.DenoisingStage":   {"Denoising stage", "≤", GroupPerf, ColumnNone, true},
		"perf.stage.Stage":            {"Stage stage", "≤", GroupPerf, ColumnNone, true},
		"perf.step.10":                {"denoise step 10", "≤", GroupPerf, ColumnNone, true},
		"consistency.ssim":            {"SSIM", "≥", GroupConsistency, ColumnSSIM, true},
		"audio.waveform_correlation":  {"waveform correlation", "≥", GroupAudio, ColumnAudio, true},
		"memory.runtime_peak":         {"runtime peak", "≤", GroupMemory, ColumnVRAM, true},
		"memory.sampler":              {"memory sampler", "≤", GroupMemory, ColumnNone, true},
		"memory.unknown":              {"memory.unknown", "≤", GroupMemory, ColumnNone, false},
		"perf.stage.":                 {"perf.stage.", "≤", GroupPerf, ColumnNone, false},
		"nodots":                      {"nodots", "≤", "nodots", ColumnNone, false},
		"consistency.ssim_per_region": {"consistency.ssim_per_region", "≤", GroupConsistency, ColumnNone, false},
	} {
		k := KindOf(name)
		got := view{k.Title(name), k.Op(), k.Group, k.Column, k.Registered}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("KindOf(%q) (-want +got):\n%s", name, diff)
		}
	}
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k.Name] {
			t.Errorf("%s is registered twice", k.Name)
		}
		seen[k.Name] = true
	}
}

func TestBeyond(t *testing.T) {
	lower, higher := KindOf(PerfE2E), KindOf(ConsistencySSIM)
	for _, tt := range []struct {
		k           Kind
		value, lim  float64
		want        float64
		description string
	}{
		{lower, 125, 100, 1.25, "25% too slow"},
		{lower, 50, 100, 0.5, "well within"},
		{higher, 0.8, 0.96, 1.2, "similarity short of its minimum"},
		{higher, 0, 0.9, 0, "zero similarity: no factor"},
		{lower, 5, 0, 0, "zero limit: no factor"},
	} {
		if got := tt.k.Beyond(tt.value, tt.lim); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: Beyond(%g, %g) = %g, want %g", tt.description, tt.value, tt.lim, got, tt.want)
		}
	}
}

// TestDerivedFoldUnderTheDenoisingStage: the per-step times and their mean and median are
// derived from the denoising stage (SGLang's DenoisingStage, and the model-specific stages
// whose name ends in it); the stage itself, the other stages and E2E are not.
func TestDerivedFoldUnderTheDenoisingStage(t *testing.T) {
	for _, tt := range []struct {
		name             string
		derived, isStage bool
	}{
		{PerfStepPrefix + "4", true, false},
		{PerfDenoiseAvg, true, false},
		{PerfDenoiseMedian, true, false},
		{PerfStagePrefix + DenoisingStage, false, true},
		{PerfStagePrefix + "LTX2AVDenoisingStage", false, true},
		{PerfStagePrefix + "DecodingStage", false, false},
		{PerfE2E, false, false},
		{PerfStepPrefix, false, false},
		{PerfStagePrefix, false, false},
	} {
		if got := KindOf(tt.name).Derived; got != tt.derived {
			t.Errorf("KindOf(%q).Derived = %v, want %v", tt.name, got, tt.derived)
		}
		if got := DenoisingStageCheck(tt.name); got != tt.isStage {
			t.Errorf("DenoisingStageCheck(%q) = %v, want %v", tt.name, got, tt.isStage)
		}
	}
}
