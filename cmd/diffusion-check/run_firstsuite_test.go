package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/runner"
	"github.com/diffusion-check/diffusion-check/suite"
)

// TestFirstSuiteHintNamesTheMissingKey: a run that stops on a data file the suite names but
// that does not exist yet says which key, which path and how it is made; a baseline run is
// not told to make the baseline it is making, and every other error is left as it is.
func TestFirstSuiteHintNamesTheMissingKey(t *testing.T) {
	s := &suite.Suite{Baselines: "/ws/perf_baselines", Thresholds: "/ws/thresholds", GroundTruth: "/ws/gt", KnownFailures: "/ws/known.yaml"}
	missing := func(path string) error {
		return fmt.Errorf("load: %w", &fs.PathError{Op: "stat", Path: path, Err: fs.ErrNotExist})
	}
	tests := []struct {
		name string
		err  error
		mode runner.Mode
		want string // "" for the error unchanged
	}{
		{
			"the baselines folder",
			missing("/ws/perf_baselines"),
			runner.ModeCheck,
			"the suite's baselines: /ws/perf_baselines does not exist yet; record them with `run --mode baseline`",
		},
		{
			"a file in the baselines folder",
			missing("/ws/perf_baselines/h200.json"),
			runner.ModeCheck,
			"the suite's baselines: /ws/perf_baselines does not exist yet",
		},
		{
			"the thresholds",
			missing("/ws/thresholds"),
			runner.ModeBaseline,
			"the suite's thresholds: /ws/thresholds does not exist yet; write the file, or remove the key",
		},
		{
			"the ground truth",
			missing("/ws/gt/a_1gpu.png"),
			runner.ModeCheck,
			"the suite's ground_truth: /ws/gt does not exist yet; write it with `run --mode gt`",
		},
		{"the known failures", missing("/ws/known.yaml"), runner.ModeCheck, "the suite's known_failures: /ws/known.yaml does not exist yet"},
		{"baselines in a baseline run", missing("/ws/perf_baselines"), runner.ModeBaseline, ""},
		{"a path beside a key's", missing("/ws/perf_baselines2"), runner.ModeCheck, ""},
		{"another error", fmt.Errorf("load: %w", &fs.PathError{Op: "open", Path: "/ws/perf_baselines", Err: fs.ErrPermission}), runner.ModeCheck, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := firstSuiteHint(tt.err, s, tt.mode)
			if !errors.Is(got, tt.err) {
				t.Errorf("the hint lost the error: %v", got)
			}
			switch {
			case tt.want == "" && got.Error() != tt.err.Error():
				t.Errorf("got %q, want the error unchanged", got)
			case tt.want != "" && (!strings.Contains(got.Error(), tt.want) || !strings.Contains(got.Error(), firstSuiteRecipe)):
				t.Errorf("got %q, want it to contain %q and %q", got, tt.want, firstSuiteRecipe)
			case tt.want != "" && !errors.Is(got, os.ErrNotExist):
				t.Errorf("got %v, which no longer wraps os.ErrNotExist", got)
			}
		})
	}
	if got := firstSuiteHint(missing("/x"), nil, runner.ModeCheck); got.Error() != missing("/x").Error() {
		t.Errorf("no suite: %v", got)
	}
}
