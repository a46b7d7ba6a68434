package compare

import (
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/media"
)

// ffmpegFile makes a test file with ffmpeg from lavfi sources.
func ffmpegFile(t *testing.T, name string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("no ffmpeg")
	}
	p := filepath.Join(t.TempDir(), name)
	cmd := exec.CommandContext(t.Context(), "ffmpeg", append(append([]string{"-hide_banner", "-loglevel", "error", "-nostdin", "-y"}, args...), p)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %v: %v\n%s", args, err, out)
	}
	return p
}

func tone(t *testing.T, name string, freq string, extra ...string) string {
	return ffmpegFile(t, name, append([]string{"-f", "lavfi", "-i", "sine=frequency=" + freq + ":duration=2:sample_rate=48000"}, extra...)...)
}

// TestAudio shows that the default limits separate the same audio re-encoded (passes) from
// other audio (fails), and that a missing track is a mismatch of the output.
func TestAudio(t *testing.T) {
	gt := tone(t, "gt.wav", "440", "-c:a", "pcm_s16le")
	lim := checks.AudioLimits{SpectralSimilarity: 0.95, WaveformCorrelation: 0.90, RMSdBDiff: 2, DurationDiffS: 0.1}
	for _, tc := range []struct {
		name string
		out  string
		pass bool
	}{
		{"same audio as AAC in MP4", tone(t, "aac.mp4", "440", "-c:a", "aac", "-b:a", "128k"), true},
		{"same audio resampled to 44.1 kHz", tone(t, "44k.m4a", "440", "-ar", "44100", "-c:a", "aac"), true},
		{"880 Hz instead of 440 Hz", tone(t, "880.mp4", "880", "-c:a", "aac"), false},
		{"3 s instead of 2 s", ffmpegFile(t, "long.wav", "-f", "lavfi", "-i", "sine=frequency=440:duration=3:sample_rate=48000"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Audio(t.Context(), gt, tc.out)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", r)
			cs := checks.AudioConsistency(r.Scores(), lim)
			pass := checks.RequestStatus(cs) == checks.Pass
			if pass != tc.pass {
				t.Errorf("passed %v, want %v: %+v", pass, tc.pass, cs)
			}
		})
	}

	silent := ffmpegFile(t, "silent.mp4", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=8:duration=1", "-c:v", "libx264", "-pix_fmt", "yuv420p")
	_, err := Audio(t.Context(), gt, silent)
	var me *MismatchError
	if !errors.As(err, &me) {
		t.Errorf("output without audio: error %v, want a *MismatchError", err)
	}
	_, err = Audio(t.Context(), silent, gt)
	if !errors.Is(err, media.ErrNoAudio) || errors.As(err, &me) {
		t.Errorf("ground truth without audio: error %v, want media.ErrNoAudio", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.mp4")
	if err := exec.Command("touch", empty).Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := Audio(t.Context(), gt, empty); err == nil || errors.As(err, &me) {
		t.Errorf("empty output: error %v, want an error naming it", err)
	}
}
