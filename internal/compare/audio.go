package compare

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/metrics"
)

// AudioResult compares the audio track of an output with its ground truth as SGLang's
// compare_audio_with_gt does (test_utils.py): both at 16 kHz mono, every metric but the
// duration difference over the common length (internal/metrics.CompareAudio).
type AudioResult struct {
	SampleRate   int     `json:"sample_rate"`
	GTDurationS  float64 `json:"gt_duration_s"`
	OutDurationS float64 `json:"out_duration_s"`
	// DurationDiffS is |OutDurationS − GTDurationS|, from the sample counts.
	DurationDiffS float64 `json:"duration_diff_s"`
	// GTRMSdB and OutRMSdB are the levels over the common length (20·log10 of the RMS, floored
	// at 1e-12: −240 dB for silence).
	GTRMSdB             float64 `json:"gt_rms_db"`
	OutRMSdB            float64 `json:"out_rms_db"`
	RMSdBDiff           float64 `json:"rms_db_diff"`
	WaveformCorrelation float64 `json:"waveform_correlation"`
	SpectralSimilarity  float64 `json:"spectral_similarity"`
	// OutputProblem says why the output's track fails SGLang's validate_audio_output (silent,
	// empty, not finite: checks.AudioOutputProblem of Cache.OutputAudioTrack), "" when it passes
	// or was not checked; compare sets it.
	OutputProblem string `json:"output_problem,omitempty"`
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

// IsGTWAV reports whether path names an audio ground truth as SGLang stores it
// ({id}_{n}gpu_audio.wav, any .wav file): it is read as decode_audio_gt_wav reads it
// (media.ReadGTWAV), not through ffmpeg.
func IsGTWAV(path string) bool { return strings.EqualFold(filepath.Ext(path), ".wav") }

// Audio compares the audio tracks of out and gt, decoding both at once. The output is any
// file ffmpeg reads (media.DecodeAudio, SGLang's extract_audio_pcm); so is the ground truth,
// unless it is a WAV (IsGTWAV), which must be SGLang's 16-bit mono 16 kHz ground truth. Ground
// truth without audio is an error wrapping media.ErrNoAudio (nothing to compare with); an output
// without audio where the ground truth has it, or with no samples or a NaN, is a
// *MismatchError (a failure of the output). A track that does not decode is an error naming its
// file.
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
	g := a.pcm
	var o media.PCM
	var gerr, oerr error
	var wg sync.WaitGroup
	if g == nil {
		wg.Go(func() {
			var p media.PCM
			if IsGTWAV(gt) {
				p, gerr = media.ReadGTWAV(ctx, gt)
			} else {
				p, gerr = c.helpersOf().Tools.DecodeAudio(ctx, gt)
			}
			if gerr == nil {
				g = &p
			}
		})
	}
	if kept := c.keptAudio(out); kept != nil {
		o = *kept // OutputAudio decoded it
	} else {
		o, oerr = c.helpersOf().Tools.DecodeAudio(ctx, out)
	}
	wg.Wait()
	if errors.Is(gerr, media.ErrNoAudio) {
		c.setAudio(e, gtAudio{known: true})
		return AudioResult{}, noAudio
	}
	if errors.Is(oerr, media.ErrNoAudio) {
		oerr = &MismatchError{GT: gt, Out: out, What: "audio: the ground truth has an audio track, the output has none"}
	}
	if gerr == nil && a.pcm == nil {
		kept := gtAudio{known: true, rate: g.SampleRate}
		if c != nil && c.reserve(4*int64(len(g.Samples))) {
			kept.pcm = g
		}
		c.setAudio(e, kept)
	}
	if err := errors.Join(gerr, oerr); err != nil {
		return AudioResult{}, err
	}
	if len(g.Samples) == 0 {
		return AudioResult{}, fmt.Errorf("ground truth %s: the audio track decodes to no samples", gt)
	}
	if !metrics.Finite(g.Samples) {
		return AudioResult{}, fmt.Errorf("ground truth %s: %w", gt, metrics.ErrNonFiniteAudio)
	}
	s, err := metrics.CompareAudio(o.Samples, g.Samples, media.AudioRate)
	if err != nil {
		// The ground truth passed both tests above: what failed is the output's track.
		return AudioResult{}, &MismatchError{GT: gt, Out: out, What: "audio: the output's track: " + err.Error()}
	}
	return AudioResult{
		SampleRate:          media.AudioRate,
		GTDurationS:         g.DurationS(),
		OutDurationS:        o.DurationS(),
		DurationDiffS:       s.DurationDiffS,
		GTRMSdB:             metrics.LevelDB(s.GTRMS),
		OutRMSdB:            metrics.LevelDB(s.OutRMS),
		RMSdBDiff:           s.RMSdBDiff,
		WaveformCorrelation: s.WaveformCorrelation,
		SpectralSimilarity:  s.SpectralSimilarity,
	}, nil
}

// OutputAudioTrack measures what SGLang's validate_audio_output looks at in an output's audio
// track (test_utils.py), for checks.AudioOutputProblem to judge: a, the stream as probed (nil:
// asked of ffprobe here), and its samples, decoded once (kept in the cache for the Audio
// comparison that follows): their count, whether all are finite, their RMS. An error means the
// track could not be probed or decoded. run measures every video+audio output with it, compare
// every output whose ground truth has audio.
func (c *Cache) OutputAudioTrack(ctx context.Context, out string, a *media.AudioInfo) (checks.AudioOutput, error) {
	if a == nil {
		probed, err := c.helpersOf().Tools.ProbeAudio(ctx, out)
		if err != nil {
			return checks.AudioOutput{}, err
		}
		a = &probed
	}
	pcm, err := c.OutputAudio(ctx, out, a.Channels)
	if err != nil {
		return checks.AudioOutput{}, err
	}
	return checks.AudioOutput{SampleRate: a.SampleRate, Channels: a.Channels, DurationS: a.DurationS,
		Samples: len(pcm.Samples), Finite: metrics.Finite(pcm.Samples), RMS: metrics.RMS(pcm.Samples)}, nil
}
