package compare

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/metrics"
)

// AudioResult compares the audio track of an output with its ground truth's. Both are mixed
// down to mono and the output is resampled to the ground truth's rate; the metrics are those
// of package checks (SpectralSimilarity, WaveformCorrelation, RMSdB) over the common length.
type AudioResult struct {
	SampleRate          int     `json:"sample_rate"`
	GTDurationS         float64 `json:"gt_duration_s"`
	OutDurationS        float64 `json:"out_duration_s"`
	DurationDiffS       float64 `json:"duration_diff_s"`
	GTRMSdB             float64 `json:"gt_rms_db"`
	OutRMSdB            float64 `json:"out_rms_db"`
	RMSdBDiff           float64 `json:"rms_db_diff"`
	WaveformCorrelation float64 `json:"waveform_correlation"`
	SpectralSimilarity  float64 `json:"spectral_similarity"`
}

// Scores returns the metrics the audio checks judge.
func (a AudioResult) Scores() checks.AudioScores {
	return checks.AudioScores{
		SpectralSimilarity:  a.SpectralSimilarity,
		WaveformCorrelation: a.WaveformCorrelation,
		RMSdBDiff:           a.RMSdBDiff,
		DurationDiffS:       a.DurationDiffS,
	}
}

// Audio compares the audio tracks of out and gt (any files ffmpeg reads: MP4, WAV, M4A, ...),
// decoding both at once. Ground truth without audio is an error wrapping media.ErrNoAudio
// (nothing to compare with); an output without audio where the ground truth has it is a
// *MismatchError (a failure of the output). A track that does not decode is an error naming
// its file.
func Audio(ctx context.Context, gt, out string) (AudioResult, error) {
	return (*Cache)(nil).Audio(ctx, gt, out)
}

// Audio is Audio with the ground truth's track decoded once for all the comparisons of the
// cache. After a video comparison with gt, the cache knows from that decode's probe whether
// gt has audio at all, and does not ask ffprobe again.
func (c *Cache) Audio(ctx context.Context, gt, out string) (AudioResult, error) {
	noAudio := fmt.Errorf("ground truth %s: %w", gt, media.ErrNoAudio)
	var e *entry
	if c != nil {
		var err error
		if e, err = c.acquire(ctx, gt); err != nil {
			return AudioResult{}, err
		}
		defer e.release()
	}
	a := c.audioState(e)
	if a.known && a.rate == 0 {
		return AudioResult{}, noAudio
	}
	g, rate := a.pcm, a.rate
	if g == nil && !a.known {
		var err error
		if rate, _, err = media.AudioStream(ctx, gt); err != nil {
			if errors.Is(err, media.ErrNoAudio) {
				c.setAudio(e, gtAudio{known: true})
				return AudioResult{}, noAudio
			}
			return AudioResult{}, err
		}
	}
	var o media.PCM
	var gerr, oerr error
	var wg sync.WaitGroup
	if g == nil {
		wg.Go(func() {
			var p media.PCM
			if p, gerr = media.DecodeAudio(ctx, gt, rate); gerr == nil {
				g = &p
			}
		})
	}
	o, oerr = media.DecodeAudio(ctx, out, rate)
	wg.Wait()
	if errors.Is(oerr, media.ErrNoAudio) {
		oerr = &MismatchError{GT: gt, Out: out, What: "audio: the ground truth has an audio track, the output has none"}
	}
	if gerr == nil && a.pcm == nil {
		kept := gtAudio{known: true, rate: rate}
		if c != nil && c.reserve(4*int64(len(g.Samples))) {
			kept.pcm = g
		}
		c.setAudio(e, kept)
	}
	if err := errors.Join(gerr, oerr); err != nil {
		return AudioResult{}, err
	}
	return measureAudio(*g, o), nil
}

// measureAudio computes the metrics of two decoded tracks at the same rate.
func measureAudio(g, o media.PCM) AudioResult {
	r := AudioResult{
		SampleRate:   g.SampleRate,
		GTDurationS:  g.DurationS(),
		OutDurationS: o.DurationS(),
		GTRMSdB:      metrics.RMSdB(g.Samples),
		OutRMSdB:     metrics.RMSdB(o.Samples),
	}
	r.DurationDiffS = math.Abs(r.OutDurationS - r.GTDurationS)
	r.RMSdBDiff = math.Abs(r.OutRMSdB - r.GTRMSdB)
	var wg sync.WaitGroup
	wg.Go(func() { r.SpectralSimilarity = metrics.SpectralSimilarity(o.Samples, g.Samples, g.SampleRate) })
	r.WaveformCorrelation = metrics.WaveformCorrelation(o.Samples, g.Samples)
	wg.Wait()
	return r
}
