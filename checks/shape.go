package checks

import (
	"fmt"
	"math"
)

// ShapeRequest is what SGLang's harness derives the expected shape of an output from.
type ShapeRequest struct {
	// Width and Height are the requested size; 0 when the case asks for none (SGLang's
	// parse_dimensions gives None and no size is checked).
	Width, Height int
	Video         bool
	// Edit marks an image edit (/v1/images/edits): SGLang's generate_image_edit checks the
	// requested size without the upscaling factor.
	Edit bool
	// ImageToVideo marks a video made from an input image: only SGLang's text-to-video path
	// (generate_video) computes an expected frame count.
	ImageToVideo bool
	NumFrames    int
	// Extra is the case's extra request fields (SGLang's sampling_params.extras).
	Extra map[string]any
}

// Shape is the expected shape of an output. A dimension is checked only when its Check flag is
// set; the values are float64 because SGLang multiplies by whatever number the case gives.
type Shape struct {
	CheckSize     bool
	Width, Height float64
	CheckFrames   bool
	Frames        float64
}

// The extra fields that change an output's shape, as SGLang's cases spell them.
const (
	extraUpscaling     = "enable_upscaling"
	extraUpscaleScale  = "upscaling_scale"
	extraInterpolation = "enable_frame_interpolation"
	extraInterpExp     = "frame_interpolation_exp"
	defaultUpscale     = 4
	defaultInterpExp   = 1
)

// ExpectedShape is SGLang's rule for the shape an output must have (get_generate_fn in
// test/server/test_server_utils.py @ a7ec6b97f786):
//   - the requested size, multiplied by upscaling_scale (default 4) when the case's extras
//     enable_upscaling is truthy, for image generation (generate_image) and every video
//     (_create_and_download_video); an image edit is checked at the requested size;
//   - a text-to-video case with a truthy enable_frame_interpolation and num_frames n has
//     (n − 1)·2^exp + 1 frames, exp = frame_interpolation_exp (default 1);
//   - otherwise no frame count is checked.
//
// A scale or exponent that is not a number is an error: SGLang's arithmetic would raise.
func ExpectedShape(r ShapeRequest) (Shape, error) {
	var s Shape
	if r.Width > 0 && r.Height > 0 {
		s.CheckSize, s.Width, s.Height = true, float64(r.Width), float64(r.Height)
		if !r.Edit && truthy(r.Extra[extraUpscaling]) {
			k, err := extraNumber(r.Extra, extraUpscaleScale, defaultUpscale)
			if err != nil {
				return Shape{}, err
			}
			s.Width, s.Height = s.Width*k, s.Height*k
		}
	}
	if r.Video && !r.ImageToVideo && r.NumFrames != 0 && truthy(r.Extra[extraInterpolation]) {
		exp, err := extraNumber(r.Extra, extraInterpExp, defaultInterpExp)
		if err != nil {
			return Shape{}, err
		}
		s.CheckFrames, s.Frames = true, float64(r.NumFrames-1)*math.Pow(2, exp)+1
	}
	return s, nil
}

// Problems compares a decoded output with the shape, in SGLang's words.
func (s Shape) Problems(width, height, frames int) []string {
	var p []string
	if s.CheckSize && (float64(width) != s.Width || float64(height) != s.Height) {
		p = append(p, fmt.Sprintf("size %dx%d, want %sx%s", width, height, fmtNum(s.Width), fmtNum(s.Height)))
	}
	if s.CheckFrames && float64(frames) != s.Frames {
		p = append(p, fmt.Sprintf("frame count mismatch after interpolation: %d frames, want %s", frames, fmtNum(s.Frames)))
	}
	return p
}

// extraNumber reads a numeric extra field, def when absent. Python's bool is a number (True
// is 1); null and anything else is not.
func extraNumber(extra map[string]any, key string, def float64) (float64, error) {
	v, ok := extra[key]
	if !ok {
		return def, nil
	}
	if f, ok := number(v); ok {
		return f, nil
	}
	return 0, fmt.Errorf("request extra %s: want a number, got %v (%T)", key, v, v)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	return 0, false
}

// truthy is Python's truth value of a decoded YAML or JSON value, as SGLang tests
// extras.get(key): absent, null, false, zero, "" and empty lists and maps are false.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	if f, ok := number(v); ok {
		return f != 0
	}
	return true
}
