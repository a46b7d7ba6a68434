package checks

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/results"
)

var videoLimits = ConsistencyLimits{SSIM: 0.92, PSNR: 24, MeanAbsDiff: 10, CLIP: 0.9, Origin: "h100.json: file defaults"}

func TestConsistency(t *testing.T) {
	inf := math.Inf(1)
	type want struct {
		status results.Status
		value  *float64
		detail string // substring
	}
	for _, tc := range []struct {
		name   string
		frames []FrameScore
		total  int
		want   [3]want // ssim, psnr, mad
	}{
		{
			name:   "identical image",
			frames: []FrameScore{{0, 1, inf, 0}},
			want: [3]want{
				{results.Pass, Float(1), "SSIM 1.0000 (limit ≥ 0.92)"},
				{results.Pass, nil, "PSNR +Inf: identical to the ground truth"},
				{results.Pass, Float(0), "mean abs diff 0.0000 (limit ≤ 10)"},
			},
		},
		{
			name:   "one bad frame of a video names it",
			frames: []FrameScore{{0, 0.99, 40, 1}, {1, 0.97, 35, 2}, {2, 0.41, 12, 30}, {3, 0.98, inf, 0}},
			total:  4,
			want: [3]want{
				{results.Fail, Float(0.41),
					"min SSIM 0.4100 at frame 2 of 4 (limit ≥ 0.92; mean 0.8375; 1 of 4 compared frames out of limit); thresholds: h100.json"},
				{results.Fail, Float(12), "min PSNR 12.0000 at frame 2 of 4 (limit ≥ 24; mean 29.0000; 1 of 4"},
				{results.Fail, Float(30), "max mean abs diff 30.0000 at frame 2 of 4"},
			},
		},
		{
			name:   "at the limit passes",
			frames: []FrameScore{{0, 0.92, 24, 10}},
			want:   [3]want{{results.Pass, Float(0.92), ""}, {results.Pass, Float(24), ""}, {results.Pass, Float(10), ""}},
		},
		{
			name:   "NaN fails",
			frames: []FrameScore{{0, 0.99, 40, 1}, {5, math.NaN(), math.NaN(), math.NaN()}},
			total:  8,
			want:   [3]want{{results.Fail, nil, "SSIM has no value (NaN) at frame 5 of 8"}, {results.Fail, nil, "NaN"}, {results.Fail, nil, "NaN"}},
		},
		{
			name: "no frames fails",
			want: [3]want{{results.Fail, nil, "no frames"}, {results.Fail, nil, "no frames"}, {results.Fail, nil, "no frames"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Consistency(tc.frames, tc.total, videoLimits)
			names := []string{ConsistencySSIM, ConsistencyPSNR, ConsistencyMeanAbsDiff}
			if len(got) != 3 {
				t.Fatalf("got %d checks, want 3", len(got))
			}
			for i, w := range tc.want {
				c := got[i]
				if (c.Status == results.Fail) != (c.Cause != "") {
					t.Errorf("%s %s has cause %q: a failure, and only a failure, says why in a few words", c.Name, c.Status, c.Cause)
				}
				if c.Name != names[i] || c.Status != w.status || !strings.Contains(c.Detail, w.detail) {
					t.Errorf("check %d = %s %s %q, want %s %s containing %q", i, c.Name, c.Status, c.Detail, names[i], w.status, w.detail)
				}
				if diff := cmp.Diff(w.value, c.Value); diff != "" {
					t.Errorf("%s value (-want +got):\n%s", c.Name, diff)
				}
			}
		})
	}
}

func TestCLIPVerdict(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scores []float64
		frames []int
		status results.Status
		detail string
	}{
		{"pass", []float64{0.99, 0.95, 0.97}, []int{0, 8, 15}, results.Pass, "min CLIP 0.9500 at frame 8 of 16"},
		{"fail", []float64{0.99, 0.5, 0.97}, []int{0, 8, 15}, results.Fail, "1 of 3"},
		{"no score", nil, []int{0}, results.Fail, "returned 0 scores for 1 compared frames"},
		{"too few", []float64{0.99}, []int{0, 8, 15}, results.Fail, "returned 1 scores for 3"},
		{"null", []float64{math.NaN()}, []int{0}, results.Fail, "no value (NaN)"},
		{"not a cosine", []float64{7}, []int{0}, results.Fail, "not a cosine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CLIP(tc.scores, tc.frames, 16, videoLimits)
			if c.Name != ConsistencyCLIP || c.Status != tc.status || !strings.Contains(c.Detail, tc.detail) {
				t.Errorf("got %s %s %q, want %s containing %q", c.Name, c.Status, c.Detail, tc.status, tc.detail)
			}
		})
	}
}

func TestAudioConsistency(t *testing.T) {
	lim := AudioLimits{SpectralSimilarity: 0.95, WaveformCorrelation: 0.9, RMSdBDiff: 2, DurationDiffS: 0.1}
	got := AudioConsistency(AudioScores{SpectralSimilarity: 0.99, WaveformCorrelation: 0.2, RMSdBDiff: 0.5, DurationDiffS: 0.3}, lim)
	want := map[string]results.Status{AudioSpectralSimilarity: results.Pass, AudioWaveformCorrelation: results.Fail, AudioRMSdBDiff: results.Pass,
		AudioDurationDiff: results.Fail}
	if len(got) != 4 {
		t.Fatalf("got %d checks", len(got))
	}
	for _, c := range got {
		if want[c.Name] != c.Status {
			t.Errorf("%s: %s (%s), want %s", c.Name, c.Status, c.Detail, want[c.Name])
		}
	}
	for _, c := range AudioConsistency(AudioScores{SpectralSimilarity: math.NaN()}, lim)[:1] {
		if c.Status != results.Fail {
			t.Errorf("NaN spectral similarity: %s, want fail", c.Status)
		}
	}
	for _, c := range AudioFailed("output has no audio track") {
		if c.Status != results.Fail || !strings.HasPrefix(c.Name, "audio.") {
			t.Errorf("AudioFailed: %s %s", c.Name, c.Status)
		}
	}
}

// TestAudioOutputProblemIsValidateAudioOutput: SGLang's validate_audio_output (test_utils.py)
// with probe_audio_stream's assertions, in their order.
func TestAudioOutputProblemIsValidateAudioOutput(t *testing.T) {
	ok := AudioOutput{SampleRate: 48000, Channels: 2, DurationS: 1, Samples: 16000, Finite: true, RMS: 0.1}
	with := func(f func(*AudioOutput)) AudioOutput { a := ok; f(&a); return a }
	for _, tc := range []struct {
		name string
		a    AudioOutput
		want string
	}{
		{"sounding", ok, ""},
		{"just above 1e-5", with(func(a *AudioOutput) { a.RMS = 1.0001e-5 }), ""},
		{"RMS of exactly 1e-5", with(func(a *AudioOutput) { a.RMS = 1e-5 }), "silent or near-silent: RMS 1.000e-05, want > 1e-05"},
		{"silence", with(func(a *AudioOutput) { a.RMS = 0 }), "silent or near-silent: RMS 0.000e+00"},
		{"NaN", with(func(a *AudioOutput) { a.Finite = false }), "contains NaN or inf"},
		{"no samples", with(func(a *AudioOutput) { a.Samples, a.RMS = 0, 0 }), "is empty"},
		{"no duration", with(func(a *AudioOutput) { a.DurationS = 0 }), "invalid duration: 0"},
		{"infinite duration", with(func(a *AudioOutput) { a.DurationS = math.Inf(1) }), "invalid duration: +Inf"},
		{"no channels", with(func(a *AudioOutput) { a.Channels = 0 }), "invalid channel count: 0"},
		{"no sample rate, and silent", with(func(a *AudioOutput) { a.SampleRate, a.RMS = 0, 0 }), "invalid sample rate: 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := AudioOutputProblem(tc.a)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("AudioOutputProblem = %q, want %q", got, tc.want)
			}
		})
	}
}
