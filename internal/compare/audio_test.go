package compare

import (
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"
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

// TestAudio shows that SGLang's default limits separate the same audio re-encoded (passes)
// from other audio (fails), that a missing track is a mismatch of the output, and that a WAV
// ground truth must be SGLang's (16-bit mono at 16 kHz).
func TestAudio(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	gt := tone(t, "gt.wav", "440", "-ar", "16000", "-c:a", "pcm_s16le")
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
			pass := judge.RequestStatus(cs) == results.Pass
			if pass != tc.pass {
				t.Errorf("passed %v, want %v: %+v", pass, tc.pass, cs)
			}
		})
	}

	wide := tone(t, "48k.wav", "440", "-c:a", "pcm_s16le")
	if _, err := Audio(t.Context(), wide, gt); !errors.Is(err, media.ErrGTWAV) {
		t.Errorf("a 48 kHz WAV as ground truth: error %v, want media.ErrGTWAV", err)
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

// TestCacheAudio: the ground truth's track is decoded once and the results are those of Audio;
// after a video comparison the cache knows, without asking ffprobe, that a ground truth has no
// audio.
func TestCacheAudio(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	av := func(name, freq string) string {
		return ffmpegFile(t, name, "-f", "lavfi", "-i", "testsrc=size=64x48:rate=8:duration=2",
			"-f", "lavfi", "-i", "sine=frequency="+freq+":duration=2:sample_rate=48000",
			"-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac")
	}
	gt, same, other := av("gt.mp4", "440"), av("same.mp4", "440"), av("other.mp4", "880")
	var want []AudioResult
	for _, out := range []string{same, other} {
		r, err := Audio(t.Context(), gt, out)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	for _, capBytes := range []int64{DefaultCacheBytes, 0} {
		c := NewCache(capBytes, Helpers{})
		if _, err := c.Videos(t.Context(), gt, same); err != nil {
			t.Fatal(err)
		}
		video := c.Bytes()
		for round := range 2 {
			for i, out := range []string{same, other} {
				got, err := c.Audio(t.Context(), gt, out)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(want[i], got); d != "" {
					t.Errorf("cap %d, round %d, %s (-uncached +cached):\n%s", capBytes, round, filepath.Base(out), d)
				}
			}
		}
		// 2 s at 16 kHz, mono float32 (AAC may pad the end by a frame).
		if pcm := c.Bytes() - video; capBytes > 0 && (pcm < 4*32000 || pcm > 4*(32000+1024)) {
			t.Errorf("the cache holds %d bytes of audio, want about %d", pcm, 4*32000)
		} else if capBytes == 0 && c.Bytes() != 0 {
			t.Errorf("a cache of 0 bytes holds %d", c.Bytes())
		}
	}

	silent := ffmpegFile(t, "silent.mp4", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=8:duration=1", "-c:v", "libx264", "-pix_fmt", "yuv420p")
	c := NewCache(0, Helpers{})
	if _, err := c.Videos(t.Context(), silent, silent); err != nil {
		t.Fatal(err)
	}
	e, err := c.acquire(t.Context(), silent)
	if err != nil {
		t.Fatal(err)
	}
	if a := c.audioState(e); !a.known || a.rate != 0 {
		t.Errorf("after the video comparison: %+v, want known to have no audio", a)
	}
	e.release()
	if _, err := c.Audio(t.Context(), silent, gt); !errors.Is(err, media.ErrNoAudio) {
		t.Errorf("ground truth without audio: error %v, want media.ErrNoAudio", err)
	}
}

// TestOutputAudioTrack: what OutputAudioTrack measures of an output's track is what SGLang's
// validate_audio_output judges (checks.AudioOutputProblem): a tone passes, a silent track is
// named silent, and a file without audio is an error wrapping media.ErrNoAudio.
func TestOutputAudioTrack(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	loud := tone(t, "tone.m4a", "440", "-c:a", "aac")
	silent := ffmpegFile(t, "silent.m4a", "-f", "lavfi", "-i", "anullsrc=r=48000:cl=stereo", "-t", "1", "-c:a", "aac")
	mute := ffmpegFile(t, "mute.mp4", "-f", "lavfi", "-i", "color=c=gray:s=32x32:r=4", "-t", "1", "-c:v", "libx264", "-pix_fmt", "yuv420p")
	c := NewCache(1<<20, Helpers{})
	got, err := c.OutputAudioTrack(t.Context(), loud, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := checks.AudioOutputProblem(got); p != "" || got.SampleRate != 48000 || got.Channels != 1 || got.Samples == 0 || !got.Finite {
		t.Errorf("tone: %+v, problem %q; want a 48 kHz mono track that passes", got, p)
	}
	got, err = c.OutputAudioTrack(t.Context(), silent, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := checks.AudioOutputProblem(got); got.RMS != 0 || p != "the decoded audio track is silent or near-silent: RMS 0.000e+00, want > 1e-05" {
		t.Errorf("silent: %+v, problem %q", got, p)
	}
	if _, err := c.OutputAudioTrack(t.Context(), mute, nil); !errors.Is(err, media.ErrNoAudio) {
		t.Errorf("no audio: %v, want media.ErrNoAudio", err)
	}
}
