package compare

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
	"github.com/diffusion-check/diffusion-check/internal/metrics"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"
)

// audioData is the folder of the audio pairs (testdata/audio/make.sh) and of SGLang's numbers
// for them (sglang_reference.py → sglang_reference.json); SOURCES.md says where each comes from.
const audioData = "testdata/audio"

// sglangLimits are SGLang's DEFAULT_AUDIO_*_THRESHOLD (test_utils.py), with which
// sglang_reference.py computed "passed".
var sglangLimits = checks.AudioLimits{SpectralSimilarity: 0.95, WaveformCorrelation: 0.90, RMSdBDiff: 2.0, DurationDiffS: 0.10}

type audioPair struct {
	Name      string `json:"name"`
	Output    string `json:"output"`
	OutputRaw string `json:"output_raw"`
	GTKind    string `json:"gt_kind"` // "wav" (gt/*.wav) or "media" (decoded like an output)
	GT        string `json:"gt"`
	GTRaw     string `json:"gt_raw"`
}

type sglangAudio struct {
	OutputSamples       int     `json:"output_samples"`
	GTSamples           int     `json:"gt_samples"`
	SpectralSimilarity  float64 `json:"spectral_similarity"`
	WaveformCorrelation float64 `json:"waveform_correlation"`
	RMSdBDiff           float64 `json:"rms_db_diff"`
	DurationDiff        float64 `json:"duration_diff"`
	Passed              bool    `json:"passed"`
	OutputRMS           float64 `json:"output_rms"`
	GTRMS               float64 `json:"gt_rms"`
	OutputValid         bool    `json:"output_valid"`
	OutputInvalidReason string  `json:"output_invalid_reason"`
}

// loadAudioReference reads the pairs and SGLang's numbers for them. A missing reference is a
// failure, not a skip: the test proves nothing without it.
func loadAudioReference(t *testing.T) ([]audioPair, map[string]sglangAudio, map[string]bool) {
	t.Helper()
	var pairs struct {
		Pairs []audioPair `json:"pairs"`
	}
	var ref struct {
		Numpy string                 `json:"numpy"`
		Pairs map[string]sglangAudio `json:"pairs"`
		GTWAV map[string]bool        `json:"gt_wav"`
	}
	for name, v := range map[string]any{"pairs.json": &pairs, "sglang_reference.json": &ref} {
		b, err := os.ReadFile(filepath.Join(audioData, name))
		if err != nil {
			t.Fatalf("%v: run %s/sglang_reference.py with numpy (see SOURCES.md)", err, audioData)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if len(pairs.Pairs) < 10 || len(ref.Pairs) != len(pairs.Pairs) {
		t.Fatalf("%d pairs, SGLang's numbers for %d: want the same ten or more (run sglang_reference.py again)", len(pairs.Pairs), len(ref.Pairs))
	}
	t.Logf("SGLang's numbers from numpy %s", ref.Numpy)
	return pairs.Pairs, ref.Pairs, ref.GTWAV
}

func readF32(t *testing.T, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(audioData, path))
	if err != nil {
		t.Fatal(err)
	}
	if len(b)%4 != 0 {
		t.Fatalf("%s: %d bytes, not float32 samples", path, len(b))
	}
	x := make([]float32, len(b)/4)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x
}

// tolerance is how far diffusion-check's numbers may be from SGLang's.
type tolerance struct{ similarity, dB, durationS float64 }

// Through the files, the requirement's: 2e-3 on the similarities, 0.05 dB on the level
// difference, and 10 ms on the duration (another ffmpeg may trim an AAC track's priming
// differently). On the very samples SGLang read, far tighter: float32 against float64
// arithmetic, measured at most 6e-7 and 2e-13 dB (numpy 2.5.2).
var (
	throughFiles = tolerance{similarity: 2e-3, dB: 0.05, durationS: 0.01}
	sameSamples  = tolerance{similarity: 1e-5, dB: 1e-6, durationS: 1e-12}
)

// checkAgainstSGLang compares diffusion-check's numbers for a pair with SGLang's within tol;
// the verdict under SGLang's default limits must agree.
func checkAgainstSGLang(t *testing.T, got AudioResult, want sglangAudio, tol tolerance) {
	t.Helper()
	for _, m := range []struct {
		name      string
		got, want float64
		tol       float64
	}{
		{"spectral similarity", got.SpectralSimilarity, want.SpectralSimilarity, tol.similarity},
		{"waveform correlation", got.WaveformCorrelation, want.WaveformCorrelation, tol.similarity},
		{"RMS level difference (dB)", got.RMSdBDiff, want.RMSdBDiff, tol.dB},
		{"duration difference (s)", got.DurationDiffS, want.DurationDiff, tol.durationS},
	} {
		if math.IsNaN(m.got) || math.Abs(m.got-m.want) > m.tol {
			t.Errorf("%s %.6f, SGLang %.6f (tolerance %g)", m.name, m.got, m.want, m.tol)
		}
	}
	pass := judge.RequestStatus(checks.AudioConsistency(got.Scores(), sglangLimits)) == results.Pass
	if pass != want.Passed {
		t.Errorf("passes SGLang's default limits: %v, SGLang says %v", pass, want.Passed)
	}
}

// TestAudioMetricsEqualSGLang: on every pair of testdata/audio (tones, noise, chirps, different
// lengths, stereo, quiet, clipped, silent, shorter than a frame, a whole-video ground truth),
// diffusion-check's audio consistency equals SGLang's compare_audio_with_gt and its output check
// equals validate_audio_output, as numpy computed them with SGLang's own functions
// (sglang_reference.py). First on the samples extract_audio_pcm gave (raw/), then, with ffmpeg,
// through the whole path: the files decoded by diffusion-check, the ground-truth WAVs read as
// decode_audio_gt_wav reads them. The ground-truth WAVs are also encode_audio_gt_wav's bytes.
func TestAudioMetricsEqualSGLang(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	pairs, ref, gtWAV := loadAudioReference(t)
	for _, p := range pairs {
		want, ok := ref[p.Name]
		if !ok {
			t.Errorf("%s: no SGLang numbers", p.Name)
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			out := readF32(t, p.OutputRaw)
			var gt []float32
			if p.GTKind == "wav" {
				g, err := media.ReadGTWAV(t.Context(), filepath.Join(audioData, p.GT))
				if err != nil {
					t.Fatal(err)
				}
				gt = g.Samples
				enc, err := media.EncodeGTWAV(readF32(t, p.GTRaw))
				if err != nil {
					t.Fatal(err)
				}
				file, err := os.ReadFile(filepath.Join(audioData, p.GT))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(enc, file) {
					t.Errorf("EncodeGTWAV(%s) differs from %s", p.GTRaw, p.GT)
				}
				if !gtWAV[p.GT] {
					t.Errorf("SGLang's encode_audio_gt_wav(%s) does not give %s", p.GTRaw, p.GT)
				}
			} else {
				gt = readF32(t, p.GTRaw)
			}
			if len(out) != want.OutputSamples || len(gt) != want.GTSamples {
				t.Fatalf("%d and %d samples, SGLang read %d and %d", len(out), len(gt), want.OutputSamples, want.GTSamples)
			}
			s, err := metrics.CompareAudio(out, gt, media.AudioRate)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(s.OutRMS-want.OutputRMS) > 1e-9 || math.Abs(s.GTRMS-want.GTRMS) > 1e-9 {
				t.Errorf("RMS %g and %g, SGLang %g and %g", s.OutRMS, s.GTRMS, want.OutputRMS, want.GTRMS)
			}
			checkAgainstSGLang(t, AudioResult{SpectralSimilarity: s.SpectralSimilarity, WaveformCorrelation: s.WaveformCorrelation,
				RMSdBDiff: s.RMSdBDiff, DurationDiffS: s.DurationDiffS}, want, sameSamples)
			t.Logf("spectral %.6f (SGLang %.6f), correlation %.6f (%.6f), RMS diff %.4f dB (%.4f), passed %v",
				s.SpectralSimilarity, want.SpectralSimilarity, s.WaveformCorrelation, want.WaveformCorrelation, s.RMSdBDiff, want.RMSdBDiff, want.Passed)
			// The stream as probed is the decoded part's business (below): a valid one here.
			problem := checks.AudioOutputProblem(checks.AudioOutput{SampleRate: 16000, Channels: 1, DurationS: 1,
				Samples: len(out), Finite: metrics.Finite(out), RMS: metrics.RMS(out)})
			if (problem == "") != want.OutputValid {
				t.Errorf("output check: %q; SGLang's validate_audio_output: valid %v %s", problem, want.OutputValid, want.OutputInvalidReason)
			}
		})
	}
	t.Run("decoded", func(t *testing.T) { audioPairsDecoded(t, pairs, ref) })
}

// audioPairsDecoded is the second half of TestAudioMetricsEqualSGLang: the files decoded.
func audioPairsDecoded(t *testing.T, pairs []audioPair, ref map[string]sglangAudio) {
	mediatest.NeedFFmpeg(t)
	sameFFmpeg := false
	if v, err := exec.CommandContext(t.Context(), "ffmpeg", "-version").Output(); err == nil {
		kept, _ := os.ReadFile(filepath.Join(audioData, "ffmpeg-version.txt"))
		first, _, _ := strings.Cut(string(v), "\n")
		sameFFmpeg = first == strings.TrimSpace(string(kept))
	}
	for _, p := range pairs {
		want := ref[p.Name]
		t.Run(p.Name, func(t *testing.T) {
			got, err := Audio(t.Context(), filepath.Join(audioData, p.GT), filepath.Join(audioData, p.Output))
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstSGLang(t, got, want, throughFiles)
			o, err := media.OnPath().DecodeAudio(t.Context(), filepath.Join(audioData, p.Output))
			if err != nil {
				t.Fatal(err)
			}
			if sameFFmpeg {
				if raw := readF32(t, p.OutputRaw); !equalSamples(o.Samples, raw) {
					t.Errorf("DecodeAudio(%s) differs from extract_audio_pcm's output %s (same ffmpeg)", p.Output, p.OutputRaw)
				}
			}
			rate, channels, err := media.OnPath().AudioStream(t.Context(), filepath.Join(audioData, p.Output))
			if err != nil {
				t.Fatal(err)
			}
			problem := checks.AudioOutputProblem(checks.AudioOutput{SampleRate: rate, Channels: channels, DurationS: o.DurationS(),
				Samples: len(o.Samples), Finite: metrics.Finite(o.Samples), RMS: metrics.RMS(o.Samples)})
			if (problem == "") != want.OutputValid {
				t.Errorf("output check: %q; SGLang's validate_audio_output: valid %v %s", problem, want.OutputValid, want.OutputInvalidReason)
			}
		})
	}
}

func equalSamples(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}
