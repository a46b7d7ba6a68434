package main

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/compare"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/results"
)

// kindAudio is the Kind of a comparison with an audio ground truth (SGLang's
// {id}_{n}gpu_audio.wav): audio alone, no pictures.
const kindAudio = "audio"

// compareAudio compares the audio tracks of two videos, or an output's track with an audio
// ground truth (r.Kind kindAudio); nil when the comparison is of images or the ground truth has
// no audio (nothing to compare). An output without the ground truth's audio track is a
// *compare.MismatchError. The output's track is also checked as run checks it (SGLang's
// validate_audio_output): what fails there (a silent track) is the result's OutputProblem.
func compareAudio(ctx context.Context, cache *compare.Cache, gt, out string, r compare.Result) (*compare.AudioResult, error) {
	if r.Kind != "video" && r.Kind != kindAudio {
		return nil, nil
	}
	a, err := cache.Audio(ctx, gt, out)
	if errors.Is(err, media.ErrNoAudio) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	track, err := cache.OutputAudioTrack(ctx, out, nil)
	if err != nil {
		return nil, err
	}
	a.OutputProblem = checks.AudioOutputProblem(track)
	return &a, nil
}

// withAudio adds the "audio" key to a video's JSON form, or makes the JSON form of a
// comparison with an audio ground truth: {"kind": "audio", "audio": {...}}.
func withAudio(v any, a *compare.AudioResult) any {
	if a == nil {
		return v
	}
	if r, ok := v.(compare.Result); ok && r.Kind == kindAudio {
		return struct {
			Kind  string               `json:"kind"`
			Audio *compare.AudioResult `json:"audio"`
		}{kindAudio, a}
	}
	vj, ok := v.(videoJSON)
	if !ok {
		return v
	}
	return struct {
		videoJSON
		Audio *compare.AudioResult `json:"audio"`
	}{vj, a}
}

// audioVerdict judges an audio comparison with the audio thresholds of --case (SGLang's
// compare_audio_with_gt limits) and the explicit audio limits, which win; only the checks of
// limits given. Explicit limits with no audio compared (the ground truth has none) fail: a
// limit asked for is never passed without a value.
func (l *compareLimits) audioVerdict(r compare.Result, a *compare.AudioResult) ([]results.Check, error) {
	var lim checks.AudioLimits
	var enforced [4]bool
	if l.caseID != "" {
		th, err := baselines.ThresholdsFor(l.thresholds, l.gpu)
		if err != nil {
			return nil, usageError{err}
		}
		lim, enforced = th.AudioFor(l.caseID), [4]bool{true, true, true, true}
	}
	for i, into := range []*float64{&lim.SpectralSimilarity, &lim.WaveformCorrelation, &lim.RMSdBDiff, &lim.DurationDiffS} {
		if !math.IsNaN(l.audio[i]) {
			*into, enforced[i] = l.audio[i], true
		}
	}
	if lim.Origin == "" {
		lim.Origin = "the command line"
	}
	var all []results.Check
	switch {
	case a != nil:
		all = checks.AudioConsistency(a.Scores(), lim)
	case l.audioLimits():
		all = checks.AudioFailed(fmt.Sprintf("no audio compared: the ground truth has no audio track (a %s)", r.Kind))
	default:
		return nil, nil // --case alone judges the audio only where the ground truth has some
	}
	var out []results.Check
	for i, c := range all {
		if enforced[i] && (a != nil || !math.IsNaN(l.audio[i])) {
			out = append(out, c)
		}
	}
	return out, nil
}

// audioTable prints the audio comparison for people.
func audioTable(e env, a *compare.AudioResult) error {
	if a == nil {
		return nil
	}
	if a.OutputProblem != "" {
		if _, err := fmt.Fprintf(e.stdout, "audio of the output: %s\n", a.OutputProblem); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(e.stdout,
		"audio %d Hz: spectral_similarity %.4f  waveform_correlation %.4f  rms_db_diff %.2f dB (%.2f vs %.2f)  duration_diff %.3f s (%.3f vs %.3f)\n",
		a.SampleRate, a.SpectralSimilarity, a.WaveformCorrelation, a.RMSdBDiff, a.OutRMSdB, a.GTRMSdB, a.DurationDiffS, a.OutDurationS, a.GTDurationS)
	return err
}
