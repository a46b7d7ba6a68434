package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/compare"
	"github.com/diffusion-check/diffusion-check/internal/media"
)

// kindAudio is the Kind of a comparison with an audio ground truth (SGLang's
// {id}_{n}gpu_audio.wav): audio alone, no pictures.
const kindAudio = "audio"

// compareAudio compares the audio tracks of two videos, or an output's track with an audio
// ground truth (r.Kind kindAudio); nil when the comparison is of images or the ground truth has
// no audio (nothing to compare). An output without the ground truth's audio track is a
// *compare.MismatchError.
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
// compare_audio_with_gt limits; none without --case).
func (l *compareLimits) audioVerdict(a *compare.AudioResult) ([]checks.Check, error) {
	if l.caseID == "" || a == nil {
		return nil, nil
	}
	th, err := baselines.ThresholdsFor(l.thresholds, l.gpu)
	if err != nil {
		return nil, usageError{err}
	}
	return checks.AudioConsistency(a.Scores(), th.AudioFor(l.caseID)), nil
}

// audioTable prints the audio comparison for people.
func audioTable(e env, a *compare.AudioResult) error {
	if a == nil {
		return nil
	}
	_, err := fmt.Fprintf(e.stdout, "audio %d Hz: spectral_similarity %.4f  waveform_correlation %.4f  rms_db_diff %.2f dB (%.2f vs %.2f)  duration_diff %.3f s (%.3f vs %.3f)\n",
		a.SampleRate, a.SpectralSimilarity, a.WaveformCorrelation, a.RMSdBDiff, a.OutRMSdB, a.GTRMSdB, a.DurationDiffS, a.OutDurationS, a.GTDurationS)
	return err
}
