package metrics

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// The audio metrics are SGLang's: compare_audio_with_gt and _audio_magnitude_spectrogram in
// python/sglang/multimodal_gen/test/test_utils.py (sgl-project/sglang main, 2026-08-21, after
// PR #35511). Both tracks are mono float32 samples at one rate, the caller's (in a run
// internal/media.AudioRate, SGLang's AUDIO_CONSISTENCY_SAMPLE_RATE: media.DecodeAudio decodes
// them as SGLang's extract_audio_pcm does). Every metric but the duration difference is
// taken over the common length: the longer track is cut to the shorter one.

// The frames of SGLang's magnitude spectrogram: SpectrumFrame samples every SpectrumHop, no
// centring (the track is zero-padded to one frame when shorter).
const (
	SpectrumFrame = 512
	SpectrumHop   = 160
)

// RMSFloor is the lowest RMS level the level difference uses (SGLang's max(rms, 1e-12)): a
// silent track is at 20·log10(1e-12) = −240 dB rather than −Inf.
const RMSFloor = 1e-12

// AudioScores are the metrics of one output track against its ground truth.
type AudioScores struct {
	// SpectralSimilarity is the cosine of the two magnitude spectrograms, flattened: [0, 1],
	// 0 when either is all zeros.
	SpectralSimilarity float64
	// WaveformCorrelation is the cosine of the two mean-centred tracks (Pearson's r): [−1, 1],
	// 0 when either is constant.
	WaveformCorrelation float64
	// OutRMS and GTRMS are the root mean squares over the common length.
	OutRMS, GTRMS float64
	// RMSdBDiff is |LevelDB(OutRMS) − LevelDB(GTRMS)|.
	RMSdBDiff float64
	// DurationDiffS is the difference of the sample counts in seconds.
	DurationDiffS float64
}

// Errors of CompareAudio, as SGLang's compare_audio_with_gt raises them.
var (
	ErrEmptyAudio     = errors.New("audio consistency inputs must be non-empty")
	ErrNonFiniteAudio = errors.New("audio consistency inputs must be finite")
)

// CompareAudio measures out against gt, both mono at rate Hz, as SGLang's
// compare_audio_with_gt: an empty track is ErrEmptyAudio, a NaN or infinite sample
// ErrNonFiniteAudio.
func CompareAudio(out, gt []float32, rate int) (AudioScores, error) {
	if len(out) == 0 || len(gt) == 0 || rate <= 0 {
		return AudioScores{}, ErrEmptyAudio
	}
	if !Finite(out) || !Finite(gt) {
		return AudioScores{}, ErrNonFiniteAudio
	}
	s := AudioScores{DurationDiffS: math.Abs(float64(len(out)-len(gt))) / float64(rate)}
	n := min(len(out), len(gt))
	out, gt = out[:n], gt[:n]
	s.WaveformCorrelation = waveformCorrelation(out, gt)
	s.SpectralSimilarity = spectralSimilarity(out, gt)
	s.OutRMS, s.GTRMS = RMS(out), RMS(gt)
	s.RMSdBDiff = math.Abs(LevelDB(s.OutRMS) - LevelDB(s.GTRMS))
	return s, nil
}

// Finite reports whether every sample of x is a finite number.
func Finite(x []float32) bool {
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return false
		}
	}
	return true
}

// RMS is the root mean square of x, accumulated in float64 (SGLang's
// np.sqrt(np.mean(np.square(x, dtype=np.float64)))); 0 for no samples.
func RMS(x []float32) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(len(x)))
}

// LevelDB is an RMS level in dB: 20·log10(max(rms, RMSFloor)).
func LevelDB(rms float64) float64 { return 20 * math.Log10(math.Max(rms, RMSFloor)) }

// waveformCorrelation is the cosine of a and b (equally long) once each has its mean removed;
// 0 when either has no variation.
func waveformCorrelation(a, b []float32) float64 {
	return cosine(centred(a), centred(b))
}

// centred returns x less its mean.
func centred(x []float32) []float64 {
	var m float64
	for _, v := range x {
		m += float64(v)
	}
	m /= float64(len(x))
	c := make([]float64, len(x))
	for i, v := range x {
		c[i] = float64(v) - m
	}
	return c
}

// spectralSimilarity is the cosine of the magnitude spectrograms of a and b (equally long),
// flattened over frames and bins; 0 when either is all zeros.
func spectralSimilarity(a, b []float32) float64 { return cosine(spectrogram(a), spectrogram(b)) }

// cosine is x·y / (|x|·|y|) of two equally long vectors, 0 when either is zero (SGLang's
// "if denominator > 0 else 0.0").
func cosine(x, y []float64) float64 {
	var dot, xx, yy float64
	for i := range x {
		dot += x[i] * y[i]
		xx += x[i] * x[i]
		yy += y[i] * y[i]
	}
	d := math.Sqrt(xx) * math.Sqrt(yy)
	if d <= 0 {
		return 0
	}
	return dot / d
}

// SpectrumFrames is the number of frames of the spectrogram of n samples: SGLang's
// 1 + (n − 512) // 160, with n padded to 512 when shorter.
func SpectrumFrames(n int) int { return 1 + (max(n, SpectrumFrame)-SpectrumFrame)/SpectrumHop }

// spectrogram is SGLang's _audio_magnitude_spectrogram, frame by frame in one slice: the square
// root of |rfft| of each frame weighted by the symmetric Hann window (np.hanning), 257 bins a
// frame.
func spectrogram(x []float32) []float64 {
	const bins = SpectrumFrame/2 + 1
	frames := SpectrumFrames(len(x))
	out := make([]float64, frames*bins)
	fft := fourier.NewFFT(SpectrumFrame)
	win := hanning()
	seq := make([]float64, SpectrumFrame)
	coeff := make([]complex128, bins)
	for f := range frames {
		start := f * SpectrumHop
		for i := range seq {
			seq[i] = 0 // the padding of a track shorter than a frame
			if j := start + i; j < len(x) {
				seq[i] = float64(x[j] * win[i]) // a float32 product, as numpy's frames * window
			}
		}
		coeff = fft.Coefficients(coeff, seq)
		row := out[f*bins : (f+1)*bins]
		for k, c := range coeff {
			row[k] = math.Sqrt(math.Hypot(real(c), imag(c)))
		}
	}
	return out
}

// hanning is numpy's np.hanning(SpectrumFrame).astype(np.float32), the symmetric Hann window
// 0.5 − 0.5·cos(2πi/(M−1)).
func hanning() []float32 {
	w := make([]float32, SpectrumFrame)
	for i := range w {
		w[i] = float32(0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/(SpectrumFrame-1)))
	}
	return w
}
