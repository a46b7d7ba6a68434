package runner

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// TestOutputValidAudioIsSGLangs: a video+audio output whose decoded track is silent (RMS ≤
// 1e-5) fails output.valid, as SGLang's validate_audio_output fails the request
// (test_server_utils.py calls it on every video+audio output); a sounding one passes, and a
// video case's silent track is not checked.
func TestOutputValidAudioIsSGLangs(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	dir := t.TempDir()
	video := func(name, audio string) string {
		p := filepath.Join(dir, name)
		cmd := exec.CommandContext(t.Context(), "ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y",
			"-f", "lavfi", "-i", "testsrc=size=64x48:rate=8:duration=1", "-f", "lavfi", "-i", audio,
			"-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", p)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg: %v\n%s", err, out)
		}
		return p
	}
	tone := video("tone.mp4", "sine=frequency=440:duration=1")
	silent := video("silent.mp4", "anullsrc=channel_layout=mono:sample_rate=48000")
	v := &validator{probe: media.OnPath().Probe}
	for _, tc := range []struct {
		name     string
		modality suite.Modality
		path     string
		want     results.Status
		detail   string
	}{
		{"sounding video+audio", suite.VideoAudio, tone, results.Pass, "audio aac"},
		{"silent video+audio", suite.VideoAudio, silent, results.Fail, "the decoded audio track is silent or near-silent: RMS 0.000e+00, want > 1e-05"},
		{"silent track of a video case", suite.Video, silent, results.Pass, "audio aac"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &suite.Case{ID: "av", Modality: tc.modality}
			var rr results.RequestResult
			cs := v.output(t.Context(), c, reply{ID: "x", Ext: "mp4", Files: []mediaFile{{Path: tc.path, Bytes: 1}}}, dir, &rr, nil)
			var valid *results.Check
			for i := range cs {
				if cs[i].Name == results.OutputValid {
					valid = &cs[i]
				}
			}
			if valid == nil || valid.Status != tc.want || !strings.Contains(valid.Detail, tc.detail) {
				t.Errorf("output.valid %+v, want %s saying %q", valid, tc.want, tc.detail)
			}
		})
	}
}
