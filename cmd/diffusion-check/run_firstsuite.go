package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/diffusion-check/diffusion-check/runner"
	"github.com/diffusion-check/diffusion-check/suite"
)

// firstSuiteRecipe is where the README shows a new suite's first runs, in order.
const firstSuiteRecipe = `README.md, "Your first suite"`

// firstSuiteHint explains a run that stopped because a data file the suite names does not
// exist yet, which is how every new suite starts: the error alone ("stat …: no such file or
// directory") says neither which suite key it came from nor how the file is made. Any other
// error is returned as it is.
func firstSuiteHint(err error, s *suite.Suite, mode runner.Mode) error {
	var pe *fs.PathError
	if s == nil || !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	keys := []struct {
		key, path, makeIt string
	}{
		{"baselines", s.Baselines,
			"record them with `run --mode baseline`, then write the file with `diffusion-check baseline --out <baselines>/<gpu>.json RESULTS`"},
		{"thresholds", s.Thresholds, "write the file, or remove the key: without it the built-in thresholds apply (docs/consistency.md)"},
		{"ground_truth", s.GroundTruth, "write it with `run --mode gt`"},
		{"known_failures", s.KnownFailures, "write the file (docs/known-failures.md), or remove the key"},
	}
	for _, k := range keys {
		if k.path == "" || !within(pe.Path, k.path) {
			continue
		}
		if k.key == "baselines" && mode == runner.ModeBaseline {
			break // a baseline run makes the baseline; a missing file here is something else
		}
		return fmt.Errorf("%w\nthe suite's %s: %s does not exist yet; %s (%s)", err, k.key, k.path, k.makeIt, firstSuiteRecipe)
	}
	return err
}

// within reports whether path is dir or lies under it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
