package metrics

import (
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// The audio metrics compare an output's audio track with its ground truth. Both are mono
// float32 samples at the same rate (internal/media.DecodeAudio mixes down and resamples).
//
// Spectral similarity is the cosine of the two linear mel-magnitude spectrograms, flattened
// over their common frames. The spectrogram follows librosa.feature.melspectrogram with
// power=1: a periodic Hann window of MelFFTSize samples, hop MelHop, centred frames (the
// signal padded with MelFFTSize/2 zeros at both ends), magnitude |STFT| (not power, not dB),
// projected on MelBands triangular Slaney-scale filters from 0 Hz to Nyquist with Slaney area
// normalisation (librosa's defaults). Magnitudes, not decibels: in the log domain every
// spectrum looks alike (a 440 Hz and an 880 Hz tone score above 0.9), while linear magnitudes
// put the energy where it is and separate them (≈ 0).

// Parameters of the mel spectrogram used by SpectralSimilarity.
const (
	MelFFTSize = 2048
	MelHop     = 512
	MelBands   = 128
)

// SilenceDB is the level RMSdB reports for digital silence (an RMS of 0), so that level
// differences stay finite.
const SilenceDB = -200.0

// SpectralSimilarity returns the cosine similarity, in [0, 1], of the linear mel-magnitude
// spectrograms of a and b (both at rate Hz) over the frames both have. Two silent tracks are
// identical (1); a silent track against a sounding one scores 0. Empty input scores NaN.
func SpectralSimilarity(a, b []float32, rate int) float64 {
	if len(a) == 0 || len(b) == 0 || rate <= 0 {
		return math.NaN()
	}
	fb := melFilters(rate)
	sa, sb := melSpectrogram(a, fb), melSpectrogram(b, fb)
	n := min(len(sa), len(sb))
	var dot, na, nb float64
	for i := range n {
		x, y := sa[i], sb[i]
		dot += x * y
		na += x * x
		nb += y * y
	}
	switch {
	case na == 0 && nb == 0:
		return 1
	case na == 0 || nb == 0:
		return 0
	}
	return math.Min(1, dot/math.Sqrt(na*nb))
}

// WaveformCorrelation is the Pearson correlation of a and b over their common length, in
// [-1, 1]. Two constant tracks correlate 1 when equal and 0 otherwise; empty input is NaN.
func WaveformCorrelation(a, b []float32) float64 {
	n := min(len(a), len(b))
	if n == 0 {
		return math.NaN()
	}
	var ma, mb float64
	for i := range n {
		ma += float64(a[i])
		mb += float64(b[i])
	}
	ma /= float64(n)
	mb /= float64(n)
	var sab, saa, sbb float64
	for i := range n {
		x, y := float64(a[i])-ma, float64(b[i])-mb
		sab += x * y
		saa += x * x
		sbb += y * y
	}
	if saa == 0 || sbb == 0 {
		if saa == sbb && ma == mb {
			return 1
		}
		return 0
	}
	return math.Max(-1, math.Min(1, sab/math.Sqrt(saa*sbb)))
}

// RMSdB is the level of x in dBFS: 20·log10 of its root mean square, SilenceDB for silence or
// empty input.
func RMSdB(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	if len(x) == 0 || s == 0 {
		return SilenceDB
	}
	return math.Max(SilenceDB, 20*math.Log10(math.Sqrt(s/float64(len(x)))))
}

// melSpectrogram returns the frames×MelBands mel-magnitude spectrogram of x, row by row.
func melSpectrogram(x []float32, fb *filterbank) []float64 {
	const pad = MelFFTSize / 2
	frames := 1 + len(x)/MelHop // librosa, center=True
	out := make([]float64, frames*MelBands)
	fft := fourier.NewFFT(MelFFTSize)
	seq := make([]float64, MelFFTSize)
	coeff := make([]complex128, MelFFTSize/2+1)
	mag := make([]float64, MelFFTSize/2+1)
	win := hannWindow()
	for f := range frames {
		start := f*MelHop - pad
		for i := range seq {
			j := start + i
			if j < 0 || j >= len(x) {
				seq[i] = 0
				continue
			}
			seq[i] = float64(x[j]) * win[i]
		}
		coeff = fft.Coefficients(coeff, seq)
		for k, c := range coeff {
			mag[k] = math.Hypot(real(c), imag(c))
		}
		row := out[f*MelBands : (f+1)*MelBands]
		for m, band := range fb.bands {
			var s float64
			for k, w := range band.weights {
				s += w * mag[band.lo+k]
			}
			row[m] = s
		}
	}
	return out
}

// hannWindow is the periodic Hann window of MelFFTSize samples (scipy's get_window("hann")).
func hannWindow() []float64 {
	w := make([]float64, MelFFTSize)
	for i := range w {
		w[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/MelFFTSize)
	}
	return w
}

// filterbank holds the non-zero weights of each mel filter over the FFT bins.
type filterbank struct {
	bands [MelBands]struct {
		lo      int
		weights []float64
	}
}

// melFilters builds librosa.filters.mel(sr=rate, n_fft=MelFFTSize, n_mels=MelBands) with its
// defaults: fmin 0, fmax rate/2, Slaney mel scale (htk=False), norm="slaney".
func melFilters(rate int) *filterbank {
	fmax := float64(rate) / 2
	lo, hi := hzToMel(0), hzToMel(fmax)
	var hz [MelBands + 2]float64
	for i := range hz {
		hz[i] = melToHz(lo + (hi-lo)*float64(i)/float64(MelBands+1))
	}
	nbins := MelFFTSize/2 + 1
	fb := &filterbank{}
	for m := range MelBands {
		enorm := 2 / (hz[m+2] - hz[m])
		first := -1
		var w []float64
		for k := range nbins {
			f := float64(k) * float64(rate) / MelFFTSize
			lower := (f - hz[m]) / (hz[m+1] - hz[m])
			upper := (hz[m+2] - f) / (hz[m+2] - hz[m+1])
			v := math.Max(0, math.Min(lower, upper)) * enorm
			if v <= 0 {
				continue // the weights of a triangle are contiguous
			}
			if first < 0 {
				first = k
			}
			w = append(w, v)
		}
		if first < 0 { // a band narrower than one bin: librosa leaves it empty too
			first = 0
		}
		fb.bands[m].lo = first
		fb.bands[m].weights = w
	}
	return fb
}

// The Slaney mel scale: linear below 1 kHz, logarithmic above (librosa's hz_to_mel, htk=False).
const (
	melFSp     = 200.0 / 3
	melMinLogH = 1000.0
	melMinLogM = melMinLogH / melFSp
)

func melLogStep() float64 { return math.Log(6.4) / 27 }

func hzToMel(f float64) float64 {
	if f < melMinLogH {
		return f / melFSp
	}
	return melMinLogM + math.Log(f/melMinLogH)/melLogStep()
}

func melToHz(m float64) float64 {
	if m < melMinLogM {
		return m * melFSp
	}
	return melMinLogH * math.Exp(melLogStep()*(m-melMinLogM))
}
