package compare

import (
	"errors"
	"image"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
)

// scene fills frame i of a smooth moving picture; frames listed in bad get a bright square.
func scene(w, h int, bad map[int]bool) func(int, []byte) {
	return func(i int, rgb []byte) {
		for p := range w * h {
			x, y := p%w, p/w
			rgb[3*p] = byte(2*x + 3*i)
			rgb[3*p+1] = byte(3*y + i)
			rgb[3*p+2] = byte(90 + (x*y)%40)
			if bad[i] && x > w/4 && x < w/2 && y > h/4 && y < h/2 {
				rgb[3*p], rgb[3*p+1], rgb[3*p+2] = 255, 255-byte(x), 0
			}
		}
	}
}

func video(t *testing.T, name string, w, h, n int, bad map[int]bool) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := media.OnPath().EncodeVideo(t.Context(), p, w, h, n, 8, scene(w, h, bad), nil); err != nil {
		t.Fatal(err)
	}
	return p
}

func pngFile(t *testing.T, name string, rgb []byte, w, h int) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range w * h {
		copy(img.Pix[4*i:4*i+3], rgb[3*i:3*i+3])
		img.Pix[4*i+3] = 255
	}
	data, err := media.EncodePNG(img)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestImages(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	w, h := 40, 30
	a := make([]byte, 3*w*h)
	scene(w, h, nil)(0, a)
	b := make([]byte, len(a))
	scene(w, h, map[int]bool{0: true})(0, b)
	gt, same, other := pngFile(t, "gt.png", a, w, h), pngFile(t, "same.png", a, w, h), pngFile(t, "other.png", b, w, h)

	res, err := Images(t.Context(), gt, same)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != "image" || res.Frames != 1 || len(res.PerFrame) != 1 || res.MinSSIM != 1 || !math.IsInf(res.MinPSNR, 1) || res.MaxMeanAbsDiff != 0 {
		t.Errorf("identical images: %+v", res)
	}
	res, err = uncached.Files(t.Context(), gt, other)
	if err != nil {
		t.Fatal(err)
	}
	if res.MinSSIM >= 0.9 || math.IsInf(res.MinPSNR, 0) || res.MaxMeanAbsDiff == 0 {
		t.Errorf("different images: %+v", res)
	}

	small := pngFile(t, "small.png", a[:3*w*(h-2)], w, h-2)
	_, err = Images(t.Context(), gt, small)
	var mm *MismatchError
	if !errors.As(err, &mm) || !strings.Contains(err.Error(), "size: ground truth 40x30, output 40x28") {
		t.Errorf("size mismatch: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.png")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := uncached.Files(t.Context(), gt, empty); err == nil || errors.As(err, &mm) || !strings.Contains(err.Error(), "empty.png: empty file") {
		t.Errorf("zero-byte output: %v", err)
	}
}

func TestVideos(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	mediatest.NeedFFmpeg(t)
	w, h, n := 64, 48, 12
	gt := video(t, "gt.mp4", w, h, n, nil)
	out := video(t, "out.mp4", w, h, n, map[int]bool{7: true})

	res, err := Videos(t.Context(), gt, gt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Frames != n || len(res.PerFrame) != n || res.MinSSIM != 1 || !math.IsInf(res.MeanPSNR, 1) {
		t.Errorf("a video against itself: %+v", res)
	}
	res, err = uncached.Files(t.Context(), gt, out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != "video" || res.Width != w || res.Height != h || res.Frames != n || len(res.PerFrame) != n {
		t.Fatalf("result %+v", res)
	}
	for i, f := range res.PerFrame {
		if f.Index != i {
			t.Fatalf("PerFrame[%d] is frame %d", i, f.Index)
		}
		if i != 7 && f.SSIM < 0.95 { // inter-frame coding carries some of frame 7 on
			t.Errorf("frame %d: SSIM %v, want the same picture", i, f.SSIM)
		}
	}
	if res.WorstFrame != 7 || res.MinSSIM > 0.9 || res.MinSSIM != res.PerFrame[7].SSIM {
		t.Errorf("worst frame %d (min SSIM %v), want 7", res.WorstFrame, res.MinSSIM)
	}
	// The metrics of the worst frame are those of the two decoded frames.
	a, _, _, err := FrameAt(t.Context(), out, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 3*w*h {
		t.Fatalf("FrameAt: %d bytes", len(a))
	}
	if _, _, _, err := FrameAt(t.Context(), out, n); err == nil || !strings.Contains(err.Error(), "has 12 frames") {
		t.Errorf("FrameAt past the end: %v", err)
	}
}

func TestVideosMismatch(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	mediatest.NeedFFmpeg(t)
	gt := video(t, "gt.mp4", 64, 48, 12, nil)
	var mm *MismatchError
	_, err := Videos(t.Context(), gt, video(t, "short.mp4", 64, 48, 9, nil))
	if !errors.As(err, &mm) || !strings.Contains(err.Error(), "frame count: ground truth 12, output 9") {
		t.Errorf("fewer frames: %v", err)
	}
	_, err = Videos(t.Context(), gt, video(t, "long.mp4", 64, 48, 15, nil))
	if !errors.As(err, &mm) || !strings.Contains(err.Error(), "frame count: ground truth 12, output 15") {
		t.Errorf("more frames: %v", err)
	}
	_, err = Videos(t.Context(), gt, video(t, "wide.mp4", 80, 48, 12, nil))
	if !errors.As(err, &mm) || !strings.Contains(err.Error(), "size: ground truth 64x48, output 80x48") {
		t.Errorf("other size: %v", err)
	}
	png := pngFile(t, "still.png", make([]byte, 3*64*48), 64, 48)
	if _, err := uncached.Files(t.Context(), gt, png); !errors.As(err, &mm) || !strings.Contains(err.Error(), "kind: ground truth is a video, output an image") {
		t.Errorf("image against video: %v", err)
	}
}

func TestVideosBroken(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	mediatest.NeedFFmpeg(t)
	gt := video(t, "gt.mp4", 64, 48, 24, nil)
	data, err := os.ReadFile(gt)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{
		"cut.mp4":   data[:len(data)*2/3],
		"empty.mp4": nil,
		"junk.mp4":  []byte(strings.Repeat("garbage ", 500)),
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := uncached.Files(t.Context(), gt, p)
		var mm *MismatchError
		if err == nil || errors.As(err, &mm) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want a decode error naming it", name, err)
		}
	}
}

func TestKeyFrames(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	mediatest.NeedFFmpeg(t)
	w, h, n := 64, 48, 11
	gt := video(t, "gt.mp4", w, h, n, nil)
	keys := map[int]string{}
	for key, idx := range map[int]int{FrameFirst: 0, FrameMid: n / 2, FrameLast: n - 1} {
		rgb, _, _, err := FrameAt(t.Context(), gt, idx)
		if err != nil {
			t.Fatal(err)
		}
		keys[key] = pngFile(t, "key.png", rgb, w, h)
	}
	res, err := uncached.KeyFrames(t.Context(), keys, gt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Frames != n || len(res.PerFrame) != 3 || res.PerFrame[1].Index != 5 || res.PerFrame[2].Index != 10 || res.MinSSIM != 1 {
		t.Errorf("key frames of the same video: %+v", res)
	}
	out := video(t, "out.mp4", w, h, n, map[int]bool{5: true})
	res, err = uncached.KeyFrames(t.Context(), keys, out)
	if err != nil {
		t.Fatal(err)
	}
	if res.WorstFrame != 5 || res.MinSSIM > 0.9 {
		t.Errorf("drift in the middle frame: worst %d, SSIM %v", res.WorstFrame, res.MinSSIM)
	}
	var mm *MismatchError
	if _, err := uncached.KeyFrames(t.Context(), map[int]string{40: keys[FrameFirst]}, out); !errors.As(err, &mm) {
		t.Errorf("key frame past the end: %v", err)
	}
}

// uncached is a nil *Cache: every comparison decodes both sides and keeps nothing, as the
// package functions Images and Videos do.
var uncached *Cache
