package runner

import (
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/suite"
)

// Rule: output.valid judges the shape SGLang expects: an upscaled case's output is the
// requested size times upscaling_scale, a frame-interpolated one has (n − 1)·2^exp + 1
// frames, and no other frame count is checked. Source: get_generate_fn,
// test_server_utils.py @ a7ec6b97f786.
func TestShapeProblemsRule(t *testing.T) {
	const src = "get_generate_fn, test_server_utils.py @ a7ec6b97f786"
	img := func(extra map[string]any) *suite.Case {
		return &suite.Case{
			ID:       "flux_2_image_t2i_upscaling_4x",
			Modality: suite.Image,
			Request:  suite.Request{Width: 1024, Height: 1024, OutputFormat: "png", Extra: extra},
		}
	}
	vid := func(frames int, extra map[string]any) *suite.Case {
		return &suite.Case{ID: "wan", Modality: suite.Video, Request: suite.Request{Width: 64, Height: 64, NumFrames: frames, Extra: extra}}
	}
	for _, tt := range []struct {
		input string
		c     *suite.Case
		info  media.Info
		want  string // "" for no problem
	}{
		{"upscaled 4× passes", img(map[string]any{"enable_upscaling": true, "upscaling_scale": 4}), media.Info{Width: 4096, Height: 4096, Codec: "png"}, ""},
		{"upscaled case at the requested size fails", img(map[string]any{"enable_upscaling": true, "upscaling_scale": 4}),
			media.Info{Width: 1024, Height: 1024, Codec: "png"}, "size 1024x1024, want 4096x4096"},
		{"plain image at its size", img(nil), media.Info{Width: 1024, Height: 1024, Codec: "png"}, ""},
		{"a video's frame count is not checked", vid(81, nil), media.Info{Width: 64, Height: 64, Frames: 77}, ""},
		{"interpolated 2×: 161 frames of 81", vid(81, map[string]any{"enable_frame_interpolation": true}), media.Info{Width: 64, Height: 64, Frames: 161}, ""},
		{"interpolated 2×, 81 frames", vid(81, map[string]any{"enable_frame_interpolation": true}), media.Info{Width: 64, Height: 64, Frames: 81},
			"frame count mismatch after interpolation: 81 frames, want 161"},
		{"a bad scale names the case", img(map[string]any{"enable_upscaling": true, "upscaling_scale": "x"}),
			media.Info{Width: 1, Height: 1, Codec: "png"}, "case flux_2_image_t2i_upscaling_4x: request extra upscaling_scale: want a number"},
	} {
		got := strings.Join(shapeProblems(tt.c, tt.info), "; ")
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s (%s): problems %q, want %q", tt.input, src, got, tt.want)
		}
	}
}
