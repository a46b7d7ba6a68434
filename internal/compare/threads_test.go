package compare

import (
	"runtime"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/media"
)

// TestHelpersThreads: a thread budget bounds the metric's workers and every decoder's ffmpeg
// threads; without one (or with n ≤ 0) the metric takes one worker per core and ffmpeg
// chooses its own.
func TestHelpersThreads(t *testing.T) {
	t.Parallel() // its own files; the package keeps no state between calls
	cores := max(1, runtime.GOMAXPROCS(0))
	for _, tc := range []struct {
		name    string
		h       Helpers
		workers int
		decode  media.DecodeOptions
	}{
		{"none", Helpers{}, cores, media.DecodeOptions{Whole: true}},
		{"negative", Helpers{Threads: -1}, cores, media.DecodeOptions{Whole: true}},
		{"one", Helpers{Threads: 1}, 1, media.DecodeOptions{Whole: true, Threads: 1}},
		{"three", Helpers{Threads: 3}, 3, media.DecodeOptions{Whole: true, Threads: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n, _ := tc.h.threads(); n != tc.workers {
				t.Errorf("workers = %d, want %d", n, tc.workers)
			}
			if got := tc.h.decodeOptions(); got != tc.decode {
				t.Errorf("decode options %+v, want %+v", got, tc.decode)
			}
		})
	}
}
