package refserver

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
)

// TestFaultDriftSplit checks that video-drift-after changes only the pictures and
// audio-drift-after only the audio track, so that the consistency and audio checks can be
// shown to fail independently.
func TestFaultDriftSplit(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	v := map[string]any{"prompt": "p", "size": "64x48", "num_frames": 4, "seed": 1, "generate_audio": true}
	pcm := func(mp4 []byte) []float32 {
		p := filepath.Join(t.TempDir(), "v.mp4")
		if err := os.WriteFile(p, mp4, 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := media.OnPath().DecodeAudio(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		return a.Samples
	}
	for _, tc := range []struct {
		fault                string
		videoSame, audioSame bool
	}{
		{"video-drift-after=1", false, true},
		{"audio-drift-after=1", true, false},
		{"drift-after=1", false, false},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			ts := start(t, Config{Faults: faults(t, tc.fault)})
			_, first := ts.video(t, v)
			_, second := ts.video(t, v)
			f1, f2 := frames(t, first, 64, 48), frames(t, second, 64, 48)
			videoSame := true
			for i := range f1 {
				if !bytes.Equal(f1[i], f2[i]) {
					videoSame = false
					if s := ssim(f1[i], f2[i], 64, 48); s >= 0.8 {
						t.Errorf("frame %d: SSIM %.3f after the fault, want clearly below 0.9", i, s)
					}
				}
			}
			audioSame := slices.Equal(pcm(first), pcm(second))
			if videoSame != tc.videoSame || audioSame != tc.audioSame {
				t.Errorf("request 2 vs 1: video same %v, audio same %v; want %v, %v", videoSame, audioSame, tc.videoSame, tc.audioSame)
			}
		})
	}
}
