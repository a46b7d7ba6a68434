package checks

import (
	"fmt"
	"math"
	"strings"

	"github.com/diffusion-check/diffusion-check/results"
)

// Names of the consistency and audio checks: an output against its ground truth.
const (
	ConsistencySSIM        = "consistency.ssim"
	ConsistencyPSNR        = "consistency.psnr"
	ConsistencyMeanAbsDiff = "consistency.mean_abs_diff"
	ConsistencyCLIP        = "consistency.clip"
	// CLIPNotEnforced is the Cause of a consistency.clip skip for want of a CLIP scorer:
	// SGLang always enforces CLIP (openai/clip-vit-large-patch14, test_utils.py
	// CLIP_MODEL_NAME), so the report says once per run where diffusion-check did not.
	CLIPNotEnforced = "CLIP not enforced: no CLIP scorer configured"

	AudioSpectralSimilarity  = "audio.spectral_similarity"
	AudioWaveformCorrelation = "audio.waveform_correlation"
	AudioRMSdBDiff           = "audio.rms_db_diff"
	AudioDurationDiff        = "audio.duration_diff"

	// ConsistencyGroup and AudioGroup name the one check a request gets when a whole group was
	// not made (no ground truth, disabled by the case): a skip with the reason, instead of one
	// skip per metric.
	ConsistencyGroup = "consistency"
	AudioGroup       = "audio"
	// GroundTruthWrite is the check of a request whose output `run --mode gt` wrote as ground
	// truth.
	GroundTruthWrite = "ground_truth.write"
)

// ConsistencyLimits are the thresholds of one case: a compared frame passes when SSIM ≥ SSIM,
// PSNR ≥ PSNR, mean absolute difference ≤ MeanAbsDiff and CLIP ≥ CLIP. Origin says where they
// were read (e.g. "h100.json cases.flux_image_t2i"), for the check details.
type ConsistencyLimits struct {
	SSIM, PSNR, MeanAbsDiff, CLIP float64
	Origin                        string
}

// AudioLimits are the audio thresholds of one case: spectral similarity and waveform
// correlation at least, RMS level difference (dB) and duration difference (s) at most.
type AudioLimits struct {
	SpectralSimilarity, WaveformCorrelation, RMSdBDiff, DurationDiffS float64
	Origin                                                            string
}

// FrameScore holds the metrics of one compared frame; Index is its 0-based index in the video
// (0 for an image).
type FrameScore struct {
	Index                   int
	SSIM, PSNR, MeanAbsDiff float64
}

// Consistency turns the metrics of the compared frames of one output into the checks
// consistency.ssim, consistency.psnr and consistency.mean_abs_diff. Each check's value is the
// worst frame's (lowest SSIM and PSNR, highest difference), and its detail names that frame;
// total is the output's frame count (0 or 1 for an image). Every frame must pass: one bad
// frame fails the check. A NaN metric, or no frames at all, fails: an enforced metric without
// a value never passes. A PSNR of +Inf (identical frames) passes and has no value (JSON has
// no infinity); the detail says so.
func Consistency(frames []FrameScore, total int, lim ConsistencyLimits) []results.Check {
	if len(frames) == 0 {
		out := []results.Check{}
		for _, name := range []string{ConsistencySSIM, ConsistencyPSNR, ConsistencyMeanAbsDiff} {
			c := Failed(name, "no frames were compared with the ground truth")
			c.Cause = "no frames compared"
			out = append(out, c)
		}
		return out
	}
	return []results.Check{
		metricCheck(ConsistencySSIM, "SSIM", "", groundTruth, frames, total, lim.SSIM, true, lim.Origin, func(f FrameScore) float64 { return f.SSIM }),
		metricCheck(ConsistencyPSNR, "PSNR", "dB", groundTruth, frames, total, lim.PSNR, true, lim.Origin, func(f FrameScore) float64 { return f.PSNR }),
		metricCheck(ConsistencyMeanAbsDiff, "mean abs diff", "", groundTruth, frames, total, lim.MeanAbsDiff, false, lim.Origin,
			func(f FrameScore) float64 { return f.MeanAbsDiff }),
	}
}

// groundTruth is what the consistency and audio checks compare with, in their details.
const groundTruth = "the ground truth"

// metricCheck judges one metric over the frames against ref (what they were compared with,
// e.g. "the ground truth"); higher is better when atLeast.
func metricCheck(name, label, unit, ref string, frames []FrameScore, total int, limit float64, atLeast bool, origin string,
	get func(FrameScore) float64) results.Check {
	c := results.Check{Name: name, Unit: unit, Limit: Float(limit)}
	op := "≥"
	if !atLeast {
		op = "≤"
	}
	worst, bad, firstBad, sum, finite := -1, 0, -1, 0.0, 0
	for i, f := range frames {
		v := get(f)
		if math.IsNaN(v) {
			c.Status, c.Cause = results.Fail, "no value (NaN)"
			c.Detail = fmt.Sprintf("%s has no value (NaN) at %s", label, frameName(f.Index, total))
			return c
		}
		if (atLeast && v < limit) || (!atLeast && v > limit) {
			if bad == 0 {
				firstBad = f.Index
			}
			bad++
		}
		if worst < 0 || (atLeast && v < get(frames[worst])) || (!atLeast && v > get(frames[worst])) {
			worst = i
		}
		if !math.IsInf(v, 0) {
			sum += v
			finite++
		}
	}
	w := get(frames[worst])
	where := frameName(frames[worst].Index, total)
	var b strings.Builder
	switch {
	case math.IsInf(w, 1) && atLeast:
		fmt.Fprintf(&b, "%s +Inf: identical to %s", label, ref)
		if len(frames) > 1 {
			fmt.Fprintf(&b, " in all %d compared frames", len(frames))
		}
	case len(frames) == 1:
		c.Value = Float(w)
		fmt.Fprintf(&b, "%s %s (limit %s %g)", label, fmtMetric(w), op, limit)
		if total > 1 {
			fmt.Fprintf(&b, " at %s", where)
		}
	default:
		c.Value = Float(w)
		word := "min"
		if !atLeast {
			word = "max"
		}
		fmt.Fprintf(&b, "%s %s %s at %s (limit %s %g", word, label, fmtMetric(w), where, op, limit)
		if finite > 0 {
			fmt.Fprintf(&b, "; mean %s", fmtMetric(sum/float64(finite)))
		}
		if bad > 0 {
			fmt.Fprintf(&b, "; %d of %d compared frames out of limit", bad, len(frames))
		}
		b.WriteString(")")
	}
	if origin != "" {
		fmt.Fprintf(&b, "; thresholds: %s", origin)
	}
	c.Detail = b.String()
	c.Status = results.Pass
	if bad > 0 {
		c.Status = results.Fail
		c.Cause = "differs from " + ref
		if total > 1 {
			c.Cause = fmt.Sprintf("drifts from frame %d (%d of %d frames)", firstBad, bad, len(frames))
		}
	}
	return c
}

func frameName(index, total int) string {
	if total > 1 {
		return fmt.Sprintf("frame %d of %d", index, total)
	}
	return fmt.Sprintf("frame %d", index)
}

func fmtMetric(v float64) string { return fmt.Sprintf("%.4f", v) }

// CLIP judges the CLIP image-image cosine scores of the compared frames (frames[i] is the
// frame index of scores[i]) against lim.CLIP. It is only called when a scorer is configured:
// a configured threshold without a score (no scores, fewer scores than frames, NaN) fails.
func CLIP(scores []float64, frames []int, total int, lim ConsistencyLimits) results.Check {
	c := results.Check{Name: ConsistencyCLIP, Limit: Float(lim.CLIP)}
	if len(scores) == 0 || len(scores) != len(frames) {
		c.Status = results.Fail
		c.Detail = fmt.Sprintf("the CLIP scorer returned %d scores for %d compared frames; a configured threshold (≥ %g) needs a score for each",
			len(scores), len(frames), lim.CLIP)
		return c
	}
	fs := make([]FrameScore, len(scores))
	for i, s := range scores {
		if math.IsInf(s, 0) || s < -1 || s > 1 {
			c.Status = results.Fail
			c.Detail = fmt.Sprintf("CLIP score %g at %s is not a cosine in [-1, 1]: the scorer is broken", s, frameName(frames[i], total))
			return c
		}
		fs[i] = FrameScore{Index: frames[i], SSIM: s}
	}
	return metricCheck(ConsistencyCLIP, "CLIP", "", groundTruth, fs, total, lim.CLIP, true, lim.Origin, func(f FrameScore) float64 { return f.SSIM })
}

// AudioScores are the audio metrics of one output against its ground truth.
type AudioScores struct {
	SpectralSimilarity  float64 // cosine of the magnitude spectrograms (SGLang's), [0, 1]
	WaveformCorrelation float64 // cosine of the mean-centred tracks, [-1, 1]
	RMSdBDiff           float64 // |level(out) − level(gt)|, dB
	DurationDiffS       float64 // |duration(out) − duration(gt)|, seconds
}

// AudioConsistency turns the audio metrics into the four audio.* checks. A NaN metric fails.
func AudioConsistency(s AudioScores, lim AudioLimits) []results.Check {
	return audioChecks(s, lim, groundTruth, "", [4]string{AudioSpectralSimilarity, AudioWaveformCorrelation, AudioRMSdBDiff, AudioDurationDiff})
}

// audioChecks turns the four audio metrics of a track compared with ref into checks named
// names (spectral similarity, waveform correlation, RMS level difference, duration
// difference, in that order), each label followed by suffix. A NaN metric fails.
func audioChecks(s AudioScores, lim AudioLimits, ref, suffix string, names [4]string) []results.Check {
	one := func(name, label, unit string, v, limit float64, atLeast bool) results.Check {
		return metricCheck(name, label+suffix, unit, ref, []FrameScore{{SSIM: v}}, 0, limit, atLeast, lim.Origin, func(f FrameScore) float64 { return f.SSIM })
	}
	return []results.Check{
		one(names[0], "spectral similarity", "", s.SpectralSimilarity, lim.SpectralSimilarity, true),
		one(names[1], "waveform correlation", "", s.WaveformCorrelation, lim.WaveformCorrelation, true),
		one(names[2], "RMS level difference", "dB", s.RMSdBDiff, lim.RMSdBDiff, false),
		one(names[3], "duration difference", "s", s.DurationDiffS, lim.DurationDiffS, false),
	}
}

// AudioFailed returns the four audio.* checks failed with the same detail, for an audio
// comparison that could not produce metrics because of the output (e.g. it has no audio
// track where the ground truth has one).
func AudioFailed(detail string) []results.Check {
	return []results.Check{
		Failed(AudioSpectralSimilarity, detail), Failed(AudioWaveformCorrelation, detail),
		Failed(AudioRMSdBDiff, detail), Failed(AudioDurationDiff, detail),
	}
}

// minAudioRMS is the level an output's decoded track must exceed: SGLang's
// validate_audio_output (test_utils.py) asserts rms > 1e-5 on every video+audio output.
const minAudioRMS = 1e-5

// AudioOutput is what SGLang's validate_audio_output looks at in an output's audio track: its
// stream as probed (probe_audio_stream) and its samples as decoded (extract_audio_pcm).
type AudioOutput struct {
	SampleRate, Channels int
	DurationS            float64 // the stream's, else the container's
	Samples              int
	Finite               bool    // no sample is NaN or infinite
	RMS                  float64 // of the samples, accumulated in float64
}

// AudioOutputProblem says why an output's audio track fails SGLang's validate_audio_output, in
// its order (an invalid sample rate, channel count or duration; no samples; a NaN or infinite
// sample; silence), "" when it passes.
func AudioOutputProblem(a AudioOutput) string {
	switch {
	case a.SampleRate <= 0:
		return fmt.Sprintf("the audio stream has an invalid sample rate: %d", a.SampleRate)
	case a.Channels <= 0:
		return fmt.Sprintf("the audio stream has an invalid channel count: %d", a.Channels)
	case !(a.DurationS > 0) || math.IsInf(a.DurationS, 0):
		return fmt.Sprintf("the audio stream has an invalid duration: %g", a.DurationS)
	case a.Samples <= 0:
		return "the decoded audio track is empty"
	case !a.Finite:
		return "the decoded audio track contains NaN or inf"
	case !(a.RMS > minAudioRMS):
		return fmt.Sprintf("the decoded audio track is silent or near-silent: RMS %.3e, want > %g", a.RMS, minAudioRMS)
	}
	return ""
}
