package runner

import (
	"runtime"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/clip"
	"github.com/diffusion-check/diffusion-check/internal/media"
	"github.com/diffusion-check/diffusion-check/suite"
)

// TestValidationHelpersRunBelowTheServer: a run's validation decodes, probes and scores with
// the run's own ffmpeg and CLIP scorer, at validationNice below the run (and its servers), on
// the thread budget of Options, else the suite's, else half the cores; the Options it was
// given are left as they were.
func TestValidationHelpersRunBelowTheServer(t *testing.T) {
	tools, err := media.ProbeTools(t.Context())
	if err != nil {
		t.Skipf("no ffmpeg: %v", err)
	}
	scorer := &clip.Scorer{Command: []string{"score"}}
	for _, tc := range []struct {
		name    string
		opts    Options
		threads int
	}{
		{"options", Options{ValidationThreads: 3, Suite: &suite.Suite{ValidationThreads: 5}}, 3},
		{"suite", Options{Suite: &suite.Suite{ValidationThreads: 5}}, 5},
		{"default", Options{Suite: &suite.Suite{}}, max(1, runtime.GOMAXPROCS(0)/2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Tools, tc.opts.CLIPScorer = tools, scorer
			cons, err := loadConsistency(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			h := cons.helpers
			if h.Tools.Nice() != validationNice || h.Threads != tc.threads {
				t.Errorf("helpers nice %d, threads %d; want %d and %d", h.Tools.Nice(), h.Threads, validationNice, tc.threads)
			}
			if h.Tools.FFmpeg != tools.FFmpeg || h.Tools.FFprobe != tools.FFprobe {
				t.Errorf("helpers use ffmpeg %v, ffprobe %v; want the run's %v, %v", h.Tools.FFmpeg, h.Tools.FFprobe, tools.FFmpeg, tools.FFprobe)
			}
			if cons.clip == nil || cons.clip.Nice != validationNice || cons.clip.Command[0] != "score" {
				t.Errorf("CLIP scorer %+v, want the run's at nice %d", cons.clip, validationNice)
			}
			if scorer.Nice != 0 || tc.opts.Tools.Nice() != 0 {
				t.Errorf("the run's own scorer (nice %d) or tools (nice %d) changed", scorer.Nice, tc.opts.Tools.Nice())
			}
		})
	}
}
