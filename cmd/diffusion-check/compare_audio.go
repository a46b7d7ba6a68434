package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/diffusion-check/diffusion-check/internal/compare"
	"github.com/diffusion-check/diffusion-check/internal/media"
)

// compareAudio compares the audio tracks of two videos; nil when the comparison is of images or
// the ground truth has no audio (nothing to compare). An output without the ground truth's
// audio track is a *compare.MismatchError.
func compareAudio(ctx context.Context, cache *compare.Cache, gt, out string, r compare.Result) (*compare.AudioResult, error) {
	if r.Kind != "video" {
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

// withAudio adds the "audio" key to a video's JSON form.
func withAudio(v any, a *compare.AudioResult) any {
	vj, ok := v.(videoJSON)
	if !ok || a == nil {
		return v
	}
	return struct {
		videoJSON
		Audio *compare.AudioResult `json:"audio"`
	}{vj, a}
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
