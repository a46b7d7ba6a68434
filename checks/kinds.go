package checks

import (
	"strings"

	"github.com/diffusion-check/diffusion-check/results"
)

// A Kind says what one check name means to a reader: what to call it, its unit, on which
// side of its limit a value passes, which group it belongs to and where the per-request
// table shows it. Each check name is registered once, in kinds below, beside the constant
// that names it; the renderers (report, JUnit, the CLI table) ask KindOf and never spell a
// check name themselves, so renaming a check cannot silently break them.
//
// To register a new check: name it with a constant next to the verdict that produces it
// (e.g. `PerfPerFrameGeneration = "perf.per_frame_generation"` in perf.go), then add one
// line to kinds, e.g.
//
//	{Name: PerfPerFrameGeneration, Label: "per-frame generation", Unit: "ms", Group: GroupPerf},
//
// A family of checks that share a prefix (perf.stage.<Stage>) is one entry with Family set
// and a Label holding %s for the member. TestKindsCoverVerdicts fails for a check produced
// by a verdict function but not registered.
type Kind struct {
	// Name is the check name, or for a Family the prefix of its members ("perf.stage.").
	Name   string
	Family bool
	// Label is what a reader sees: short, lowercase unless a proper noun or an acronym
	// ("E2E (server)", "SSIM", "runtime VRAM"). For a Family, %s stands for the member,
	// with TrimMember cut from its end ("%s stage" and "Stage": "Denoising stage").
	Label      string
	TrimMember string
	// Unit of Value and Limit: "ms", "MiB", "dB", "s", or "" for a plain number.
	Unit      string
	Direction Direction
	Group     Group
	Column    Column
	// Decimals is how many decimals a value without a time or memory unit is shown with;
	// 0 shows up to six significant digits. (Times show as ms or s with one decimal, memory
	// as whole MiB, whatever Decimals says.)
	Decimals int
	// Detailed marks checks of which there are many per request (per stage, per step): a
	// report lists them across requests only when one of them did not pass.
	Detailed bool
	// Derived marks a figure computed from the denoising stage's per-step times (a sampled
	// step, their mean or median): when the stage is slow they are all slow, and they say
	// nothing the stage does not, so a report folds them under it (DenoisingStageCheck) and
	// tells one cause once.
	Derived bool
	// Registered is false for a name that KindOf does not know.
	Registered bool
}

// Direction says on which side of its limit a value passes.
type Direction int

// The directions: times, memory and differences pass at or under their limit; similarities
// at or over it.
const (
	LowerIsBetter Direction = iota
	HigherIsBetter
)

// Group gathers the checks of one concern; a report summarises a group's failures on one
// request as one problem.
type Group string

// The groups.
const (
	GroupServer      Group = "server"
	GroupOutput      Group = "output"
	GroupPerf        Group = "perf"
	GroupMemory      Group = "memory"
	GroupConsistency Group = "consistency"
	GroupAudio       Group = "audio"
	GroupGroundTruth Group = "ground_truth"
	// GroupRepeat is request k against request 1 of the same server start (repeat.go).
	GroupRepeat Group = "repeat"
)

// Column is the column of the per-request table that shows a check; ColumnNone puts a check
// that did not pass among the others, with its value.
type Column int

// The columns of the per-request table.
const (
	ColumnNone Column = iota
	ColumnE2E
	ColumnVRAM
	ColumnSSIM
	ColumnPSNR
	ColumnAudio
)

// MemorySampler names the note a request or case carries when a sampled memory source (NVML,
// host) could not be measured; the runner writes it, always as a skip.
const MemorySampler = "memory.sampler"

// kinds registers every check name. Read only.
var kinds = []Kind{
	{Name: results.ServerAlive, Label: "server", Group: GroupServer},
	{Name: results.ServerWarmup, Label: "warm-up requests", Group: GroupServer},
	{Name: APIModels, Label: "/v1/models", Group: GroupServer},
	{Name: APIModelID, Label: "model id", Group: GroupServer},
	{Name: LoRABasicAPI, Label: "LoRA API", Group: GroupServer},
	{Name: LoRADynamicLoad, Label: "LoRA dynamic load", Group: GroupServer},
	{Name: LoRADynamicSwitch, Label: "LoRA dynamic switch", Group: GroupServer},
	{Name: LoRAMulti, Label: "multi-LoRA API", Group: GroupServer},
	{Name: APIT2VInputReference, Label: "T2V input_reference", Group: GroupServer},
	{Name: BatchingDynamic, Label: "dynamic batching", Group: GroupServer},
	{Name: results.OutputPresent, Label: "output", Unit: "bytes", Group: GroupOutput},
	{Name: results.OutputValid, Label: "output decodable", Group: GroupOutput},
	{Name: OutputRevisedPrompt, Label: "revised prompt", Group: GroupOutput},
	{Name: OutputChatCompletion, Label: "chat completion", Group: GroupOutput},

	// The value of perf.record is the server's total_duration_ms: the E2E column shows it
	// where perf.e2e (the same figure against a limit) is not checked.
	{Name: results.PerfRecord, Label: "perf record (server total)", Unit: "ms", Group: GroupPerf, Column: ColumnE2E},
	{Name: PerfE2E, Label: "E2E (server)", Unit: "ms", Group: GroupPerf, Column: ColumnE2E},
	{Name: PerfStagePrefix, Family: true, Label: "%s stage", TrimMember: "Stage", Unit: "ms", Group: GroupPerf, Detailed: true},
	{Name: PerfStepPrefix, Family: true, Label: "denoise step %s", Unit: "ms", Group: GroupPerf, Detailed: true, Derived: true},
	{Name: PerfDenoiseAvg, Label: "mean denoise step", Unit: "ms", Group: GroupPerf, Derived: true},
	{Name: PerfDenoiseMedian, Label: "median denoise step", Unit: "ms", Group: GroupPerf, Derived: true},
	{Name: PerfLoad, Label: "load time", Unit: "ms", Group: GroupPerf},
	{Name: PerfScenario, Label: "baseline scenario", Group: GroupPerf},
	// A realtime metric's name carries its unit (_ms, _mb, or a count): SGLang's names.
	{Name: PerfRealtime, Label: "realtime chunk stats", Group: GroupPerf},
	{Name: PerfRealtimePrefix, Family: true, Label: "realtime %s", Group: GroupPerf, Decimals: 2},

	// One check per memory source (Check.Source): GPU memory, and host memory (HostMemory),
	// which the VRAM column leaves out.
	{Name: MemoryLoadPeak, Label: "load peak", Unit: "MiB", Group: GroupMemory},
	{Name: MemoryRuntimePeak, Label: "runtime peak", Unit: "MiB", Group: GroupMemory, Column: ColumnVRAM},
	{Name: MemorySampler, Label: "memory sampler", Group: GroupMemory},

	{Name: ConsistencyGroup, Label: "consistency", Group: GroupConsistency},
	{Name: QualityClipScore, Label: "CLIP score (prompt)", Direction: HigherIsBetter, Group: GroupConsistency, Decimals: 4},
	{Name: QualityClipIQA, Label: "CLIP-IQA", Direction: HigherIsBetter, Group: GroupConsistency, Decimals: 4},
	{Name: QualityImageReward, Label: "ImageReward", Direction: HigherIsBetter, Group: GroupConsistency, Decimals: 4},
	{Name: ConsistencySSIM, Label: "SSIM", Direction: HigherIsBetter, Group: GroupConsistency, Column: ColumnSSIM, Decimals: 4},
	{Name: ConsistencyPSNR, Label: "PSNR", Unit: "dB", Direction: HigherIsBetter, Group: GroupConsistency, Column: ColumnPSNR, Decimals: 2},
	{Name: ConsistencyMeanAbsDiff, Label: "mean abs diff", Group: GroupConsistency, Decimals: 3},
	{Name: ConsistencyCLIP, Label: "CLIP", Direction: HigherIsBetter, Group: GroupConsistency, Decimals: 4},

	{Name: AudioGroup, Label: "audio", Group: GroupAudio, Column: ColumnAudio},
	{Name: AudioSpectralSimilarity, Label: "spectral similarity", Direction: HigherIsBetter, Group: GroupAudio, Column: ColumnAudio, Decimals: 4},
	{Name: AudioWaveformCorrelation, Label: "waveform correlation", Direction: HigherIsBetter, Group: GroupAudio, Column: ColumnAudio, Decimals: 4},
	{Name: AudioRMSdBDiff, Label: "RMS level diff", Unit: "dB", Group: GroupAudio, Column: ColumnAudio, Decimals: 2},
	{Name: AudioDurationDiff, Label: "duration diff", Unit: "s", Group: GroupAudio, Column: ColumnAudio, Decimals: 2},

	{Name: GroundTruthWrite, Label: "ground truth written", Group: GroupGroundTruth},

	{Name: RepeatGroup, Label: "vs request 1", Group: GroupRepeat},
	{Name: RepeatSSIM, Label: "SSIM vs request 1", Direction: HigherIsBetter, Group: GroupRepeat, Decimals: 4},
	{Name: RepeatPSNR, Label: "PSNR vs request 1", Unit: "dB", Direction: HigherIsBetter, Group: GroupRepeat, Decimals: 2},
	{Name: RepeatMeanAbsDiff, Label: "mean abs diff vs request 1", Group: GroupRepeat, Decimals: 3},
	{Name: RepeatAudioSpectralSimilarity, Label: "audio spectral similarity vs request 1", Direction: HigherIsBetter, Group: GroupRepeat, Decimals: 4},
	{Name: RepeatAudioWaveformCorrelation, Label: "audio waveform correlation vs request 1", Direction: HigherIsBetter, Group: GroupRepeat, Decimals: 4},
	{Name: RepeatAudioRMSdBDiff, Label: "audio RMS level diff vs request 1", Unit: "dB", Group: GroupRepeat, Decimals: 2},
	{Name: RepeatAudioDurationDiff, Label: "audio duration diff vs request 1", Unit: "s", Group: GroupRepeat, Decimals: 3},
}

// KindOf returns the kind of a check name: its registered entry, else the family whose
// prefix it has, else an unregistered kind labelled with the name itself, grouped by the
// part before its first dot, lower-is-better, shown among the other checks.
func KindOf(name string) Kind {
	for _, k := range kinds {
		if !k.Family && k.Name == name {
			k.Registered = true
			return k
		}
	}
	for _, k := range kinds {
		if k.Family && strings.HasPrefix(name, k.Name) && len(name) > len(k.Name) {
			k.Registered = true
			return k
		}
	}
	group, _, _ := strings.Cut(name, ".")
	return Kind{Name: name, Label: name, Group: Group(group)}
}

// Title is what a reader calls the check name, which must be of this kind: the Label, with
// a family's member in place of %s ("perf.stage.DenoisingStage": "Denoising stage").
func (k Kind) Title(name string) string {
	if !k.Family {
		return k.Label
	}
	m := strings.TrimPrefix(name, k.Name)
	if t := strings.TrimSuffix(m, k.TrimMember); t != "" {
		m = t
	}
	return strings.Replace(k.Label, "%s", m, 1)
}

// DenoisingStageCheck reports whether name is the check of a denoising stage
// (perf.stage.<S> with S a denoising stage by DenoisingRole): the stage whose per-step times
// the Derived checks are computed from.
func DenoisingStageCheck(name string) bool {
	s, ok := strings.CutPrefix(name, PerfStagePrefix)
	return ok && DenoisingRole(s)
}

// HostMemory reports whether a memory source measures host memory rather than GPU memory.
func HostMemory(source string) bool {
	return source == SourceHostAnon || source == SourceServerHostAnon
}

// Op is the comparison a passing value makes with its limit: "≤" or "≥".
func (k Kind) Op() string {
	if k.Direction == HigherIsBetter {
		return "≥"
	}
	return "≤"
}

// Beyond is how far value is past limit in the failing direction, as a factor: 1 at the
// limit, above 1 past it (1.25: 25 % too slow, or a similarity 20 % short), below 1 within
// it. It is 0 when it cannot be said (a zero value or limit).
func (k Kind) Beyond(value, limit float64) float64 {
	if k.Direction == HigherIsBetter {
		if value <= 0 || limit <= 0 {
			return 0
		}
		return limit / value
	}
	if limit <= 0 {
		return 0
	}
	return value / limit
}
