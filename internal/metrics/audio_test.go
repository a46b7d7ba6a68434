package metrics

import (
	"math"
	"testing"
)

func sine(freq, amp float64, rate int, seconds float64) []float32 {
	n := int(seconds * float64(rate))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return x
}

func TestAudioMetrics(t *testing.T) {
	const rate = 48000
	a440 := sine(440, 0.5, rate, 1)
	for _, tc := range []struct {
		name                 string
		a, b                 []float32
		specLo, specHi       float64
		corrLo, corrHi       float64
		rmsDiffLo, rmsDiffHi float64
	}{
		{"same", a440, a440, 1 - 1e-12, 1, 1 - 1e-12, 1, 0, 1e-9},
		{"440 vs 880", a440, sine(880, 0.5, rate, 1), 0, 0.1, -0.05, 0.05, 0, 0.01},
		{"440 vs 445", a440, sine(445, 0.5, rate, 1), 0.5, 1, -0.2, 0.2, 0, 0.01},
		{"half as loud", a440, sine(440, 0.25, rate, 1), 1 - 1e-9, 1, 1 - 1e-9, 1, 6.0, 6.05},
		{"inverted", a440, sine(440, -0.5, rate, 1), 1 - 1e-9, 1, -1, -1 + 1e-9, 0, 1e-9},
		{"silence vs tone", make([]float32, rate), a440, 0, 0, 0, 0, 190, 200},
		{"silence vs silence", make([]float32, rate), make([]float32, rate), 1, 1, 1, 1, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := SpectralSimilarity(tc.a, tc.b, rate)
			corr := WaveformCorrelation(tc.a, tc.b)
			rms := math.Abs(RMSdB(tc.a) - RMSdB(tc.b))
			t.Logf("spectral %.4f, correlation %.4f, RMS diff %.3f dB", spec, corr, rms)
			if spec < tc.specLo || spec > tc.specHi {
				t.Errorf("spectral similarity %.6f, want in [%g, %g]", spec, tc.specLo, tc.specHi)
			}
			if corr < tc.corrLo || corr > tc.corrHi {
				t.Errorf("waveform correlation %.6f, want in [%g, %g]", corr, tc.corrLo, tc.corrHi)
			}
			if rms < tc.rmsDiffLo || rms > tc.rmsDiffHi {
				t.Errorf("RMS difference %.4f dB, want in [%g, %g]", rms, tc.rmsDiffLo, tc.rmsDiffHi)
			}
		})
	}
}

func TestAudioMetricsEmpty(t *testing.T) {
	if v := SpectralSimilarity(nil, sine(1, 1, 8000, 1), 8000); !math.IsNaN(v) {
		t.Errorf("spectral similarity of nothing = %g, want NaN", v)
	}
	if v := WaveformCorrelation(nil, nil); !math.IsNaN(v) {
		t.Errorf("correlation of nothing = %g, want NaN", v)
	}
	if v := RMSdB(nil); v != SilenceDB {
		t.Errorf("RMSdB(nil) = %g, want %g", v, SilenceDB)
	}
}

// TestMelFilters checks the filter bank's shape: triangles that tile 0 Hz to Nyquist in
// increasing order, and a pure tone whose energy lands in the band centred nearest to it.
func TestMelFilters(t *testing.T) {
	for _, rate := range []int{16000, 44100, 48000} {
		fb := melFilters(rate)
		prev := -1
		for m, b := range fb.bands {
			if len(b.weights) == 0 && rate >= 44100 {
				t.Errorf("rate %d: band %d is empty", rate, m)
			}
			if b.lo < prev {
				t.Errorf("rate %d: band %d starts at bin %d, before band %d (%d)", rate, m, b.lo, m-1, prev)
			}
			prev = b.lo
		}
	}
	const rate = 48000
	fb := melFilters(rate)
	spec := melSpectrogram(sine(1000, 0.5, rate, 0.5), fb)
	row := spec[10*MelBands : 11*MelBands]
	best := 0
	for m := range row {
		if row[m] > row[best] {
			best = m
		}
	}
	// Band centres are mel points 1..128 of 130 equally spaced from 0 to mel(24 kHz).
	lo, hi := hzToMel(0), hzToMel(rate/2)
	centre := melToHz(lo + (hi-lo)*float64(best+1)/(MelBands+1))
	if math.Abs(centre-1000) > 100 {
		t.Errorf("a 1 kHz tone peaks in band %d centred at %.0f Hz", best, centre)
	}
	if got := melToHz(hzToMel(3210)); math.Abs(got-3210) > 1e-9 {
		t.Errorf("melToHz(hzToMel(3210)) = %g", got)
	}
	if got := hzToMel(1000); got != 15 {
		t.Errorf("hzToMel(1000) = %g, want 15 (Slaney)", got)
	}
}

func BenchmarkSpectralSimilarity10s(b *testing.B) {
	const rate = 48000
	x, y := sine(440, 0.5, rate, 10), sine(445, 0.5, rate, 10)
	for b.Loop() {
		SpectralSimilarity(x, y, rate)
	}
}
