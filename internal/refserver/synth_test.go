package refserver

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/media/mediatest"
)

func BenchmarkRenderFrame(b *testing.B) {
	for _, size := range [][2]int{{256, 256}, {1280, 720}} {
		b.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(b *testing.B) {
			s := newScene(sceneKey{Prompt: "bench", Seed: 1}.hash(), stepDetail(20), false)
			c := newCanvas(s, size[0], size[1], nil)
			dst := make([]byte, 3*size[0]*size[1])
			i := 0
			for b.Loop() {
				c.frame(float64(i%16)/16, dst, 3)
				i++
			}
		})
	}
}

// BenchmarkVideoRequest is one 256x256 16-frame video+audio request end to end over HTTP
// (default 20 steps of 2 ms), polled every millisecond.
func BenchmarkVideoRequest(b *testing.B) {
	mediatest.NeedFFmpeg(b)
	h := warmHandler(Config{StepMs: 2})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	ts := &testServer{Server: srv, h: h}
	body := map[string]any{"prompt": "ocean waves", "size": "256x256", "num_frames": 16, "fps": 8, "generate_audio": true}
	for b.Loop() {
		ts.video(b, body)
	}
}

// TestDriftIsVisible checks, over many requests, that the drift fault's output is clearly
// different from the clean one (SSIM well below 0.9) yet still a picture, and that the clean
// output is not flat.
func TestDriftIsVisible(t *testing.T) {
	const w, h = 64, 64
	worst := 0.0
	for seed := range int64(40) {
		key := sceneKey{Prompt: fmt.Sprintf("prompt %d", seed%7), Seed: seed}.hash()
		clean, drifted := make([]byte, 3*w*h), make([]byte, 3*w*h)
		newCanvas(newScene(key, stepDetail(20), false), w, h, nil).frame(0, clean, 3)
		newCanvas(newScene(key, stepDetail(20), true), w, h, nil).frame(0, drifted, 3)
		s := ssim(clean, drifted, w, h)
		worst = max(worst, s)
		if s > 0.8 {
			t.Errorf("seed %d: drifted SSIM %.3f, want < 0.8", seed, s)
		}
		if sc, sd := stddev(clean), stddev(drifted); sc < 15 || sd < 15 {
			t.Errorf("seed %d: nearly flat output (stddev %.1f clean, %.1f drifted)", seed, sc, sd)
		}
	}
	t.Logf("highest SSIM clean vs drifted: %.3f", worst)
}
