package metrics

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func sine(freq, amp float64, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(amp * math.Sin(2*math.Pi*freq*float64(i)/audioRate))
	}
	return x
}

// TestCompareAudioProperties checks the metrics on tracks whose answer is known without
// SGLang (the numbers SGLang's own functions give are in internal/compare's
// TestAudioMetricsEqualSGLang): a track against itself, inverted, half as loud, cut short,
// and against silence.
func TestCompareAudioProperties(t *testing.T) {
	a440 := sine(440, 0.5, audioRate)
	silence := make([]float32, audioRate)
	for _, tc := range []struct {
		name    string
		out, gt []float32
		want    AudioScores
	}{
		{"same", a440, a440, AudioScores{SpectralSimilarity: 1, WaveformCorrelation: 1, OutRMS: 0.5 / math.Sqrt2, GTRMS: 0.5 / math.Sqrt2}},
		// |rfft| does not see the sign; the waveform does.
		{"inverted", a440, sine(440, -0.5, audioRate),
			AudioScores{SpectralSimilarity: 1, WaveformCorrelation: -1, OutRMS: 0.5 / math.Sqrt2, GTRMS: 0.5 / math.Sqrt2}},
		// Half the amplitude: −6.02 dB, and every magnitude halved (the cosine does not see it).
		{"half as loud", sine(440, 0.25, audioRate), a440,
			AudioScores{SpectralSimilarity: 1, WaveformCorrelation: 1, OutRMS: 0.25 / math.Sqrt2, GTRMS: 0.5 / math.Sqrt2, RMSdBDiff: 20 * math.Log10(2)}},
		// The output stops after 0.75 s: compared over 0.75 s, 0.25 s shorter.
		{"cut short", a440[:12000], a440,
			AudioScores{SpectralSimilarity: 1, WaveformCorrelation: 1, OutRMS: 0.5 / math.Sqrt2, GTRMS: 0.5 / math.Sqrt2, DurationDiffS: 0.25}},
		// Silence has no spectrum and no variation (0, not NaN) and sits at the 1e-12 floor.
		{"silent output", silence, a440, AudioScores{GTRMS: 0.5 / math.Sqrt2, RMSdBDiff: LevelDB(0.5/math.Sqrt2) + 240}},
		{"silence against silence", silence, silence, AudioScores{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CompareAudio(tc.out, tc.gt, audioRate)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-4)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestCompareAudioRejects: SGLang raises ValueError for an empty or non-finite track.
func TestCompareAudioRejects(t *testing.T) {
	ok := sine(440, 0.5, 1000)
	nan := append(sine(440, 0.5, 999), float32(math.NaN()))
	inf := append(sine(440, 0.5, 999), float32(math.Inf(-1)))
	for _, tc := range []struct {
		name    string
		out, gt []float32
		want    error
	}{
		{"empty output", nil, ok, ErrEmptyAudio},
		{"empty ground truth", ok, []float32{}, ErrEmptyAudio},
		{"NaN in the output", nan, ok, ErrNonFiniteAudio},
		// Beyond the common length still counts: SGLang checks the whole tracks.
		{"-Inf at the end of the longer ground truth", ok[:10], inf, ErrNonFiniteAudio},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := CompareAudio(tc.out, tc.gt, audioRate); !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
		})
	}
}

// TestSpectrumFrames is SGLang's frame count: 1 + (n − 512) // 160, one frame for a track
// shorter than 512 samples (padded), no centring.
func TestSpectrumFrames(t *testing.T) {
	for _, tc := range []struct{ n, want int }{
		{1, 1}, {511, 1}, {512, 1}, {671, 1}, {672, 2}, {16000, 97},
	} {
		if got := SpectrumFrames(tc.n); got != tc.want {
			t.Errorf("SpectrumFrames(%d) = %d, want %d", tc.n, got, tc.want)
		}
		if got := len(spectrogram(make([]float32, tc.n))); got != tc.want*257 {
			t.Errorf("spectrogram of %d samples: %d values, want %d frames of 257", tc.n, got, tc.want)
		}
	}
}

// TestSpectrogramTone: a 1 kHz tone (bin 32 of 512 at 16 kHz, exactly) peaks in bin 32 of
// every frame, with sqrt(A·Σw/2) there; the window is np.hanning's, symmetric (zero at both
// ends).
func TestSpectrogramTone(t *testing.T) {
	w := hanning()
	if w[0] != 0 || w[SpectrumFrame-1] != 0 || math.Abs(float64(w[255]-w[256])) > 1e-6 {
		t.Errorf("window ends %g, %g and middle %g, %g: want np.hanning's symmetric window", w[0], w[SpectrumFrame-1], w[255], w[256])
	}
	var sum float64
	for _, v := range w {
		sum += float64(v)
	}
	s := spectrogram(sine(1000, 0.5, 2000))
	for f := range SpectrumFrames(2000) {
		row := s[f*257 : (f+1)*257]
		best := 0
		for k := range row {
			if row[k] > row[best] {
				best = k
			}
		}
		if want := math.Sqrt(0.5 * sum / 2); best != 32 || math.Abs(row[32]-want) > 1e-3*want {
			t.Errorf("frame %d peaks in bin %d at %g, want bin 32 at %g", f, best, row[best], want)
		}
	}
}

func BenchmarkCompareAudio10s(b *testing.B) {
	x, y := sine(440, 0.5, 10*audioRate), sine(445, 0.5, 10*audioRate)
	for b.Loop() {
		if _, err := CompareAudio(x, y, audioRate); err != nil {
			b.Fatal(err)
		}
	}
}

// audioRate is the rate of the test tracks: internal/media.AudioRate, what a run compares.
const audioRate = 16000
