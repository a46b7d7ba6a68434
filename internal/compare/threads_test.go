package compare

import (
	"context"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/media"
)

// TestWithThreads: a thread budget bounds the metric's workers and every decoder's ffmpeg
// threads; without one (or with n ≤ 0) the metric takes one worker per core and ffmpeg
// chooses its own.
func TestWithThreads(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	cores := max(1, runtime.GOMAXPROCS(0))
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		workers int
		decode  media.DecodeOptions
	}{
		{"none", t.Context(), cores, media.DecodeOptions{Whole: true}},
		{"zero", WithThreads(t.Context(), 0), cores, media.DecodeOptions{Whole: true}},
		{"one", WithThreads(t.Context(), 1), 1, media.DecodeOptions{Whole: true, Threads: 1}},
		{"three", WithThreads(t.Context(), 3), 3, media.DecodeOptions{Whole: true, Threads: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n, _ := threads(tc.ctx); n != tc.workers {
				t.Errorf("workers = %d, want %d", n, tc.workers)
			}
			if diff := cmp.Diff(tc.decode, decodeOptions(tc.ctx)); diff != "" {
				t.Errorf("decode options (-want +got):\n%s", diff)
			}
		})
	}
}
