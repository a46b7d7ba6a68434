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

// TestHelpersLayout: a pass's decoders share the metric's threads (the budget, or every core
// without one), at least one thread each; each stream holds two frames more than there are
// workers; the workers run at the tools' niceness.
func TestHelpersLayout(t *testing.T) {
	t.Parallel()
	cores := max(1, runtime.GOMAXPROCS(0))
	for _, tc := range []struct {
		name     string
		h        Helpers
		decoders int
		want     layout
	}{
		{"no budget, four decoders", Helpers{}, 4, layout{workers: cores, decode: max(1, cores/4), frames: cores + 2}},
		{"budget 8, two decoders", Helpers{Threads: 8}, 2, layout{workers: 8, decode: 4, frames: 10}},
		{"budget 3, four decoders", Helpers{Threads: 3}, 4, layout{workers: 3, decode: 1, frames: 5}},
		{"budget 2, no decoder (all kept)", Helpers{Threads: 2}, 0, layout{workers: 2, decode: 2, frames: 4}},
		{"niced", Helpers{Threads: 4, Tools: media.OnPath().Niced(7)}, 1, layout{workers: 4, decode: 4, frames: 6, nice: 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.h.layout(tc.decoders); got != tc.want {
				t.Errorf("layout %+v, want %+v", got, tc.want)
			}
		})
	}
}
