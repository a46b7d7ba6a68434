package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// readResults reads the results named on a command line: results.json files, or folders that
// hold runs' output folders at any depth (an artifact download puts each job's results in a
// folder of its own). An output folder whose results.json is marked incomplete (the run
// ended before its final write) or missing is read from its requests.jsonl too
// (results.ReadOut), and what was rebuilt is said on stderr. Inputs may come from a pull
// request's artifacts: only regular files are read, each at most results.maxInputBytes, and
// reading stops when ctx ends.
func readResults(ctx context.Context, e env, args []string) ([]checks.Input, error) {
	if len(args) == 0 {
		return nil, usagef("name at least one results.json or folder holding one")
	}
	var inputs []checks.Input
	add := func(file string, res *checks.Result, warnings []error) error {
		if err := validNames(res); err != nil {
			return usagef("%s: %w", file, err)
		}
		for _, w := range warnings {
			fmt.Fprintf(e.stderr, "warning: %v\n", w)
		}
		inputs = append(inputs, checks.Input{File: file, Result: res})
		return nil
	}
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, usageError{err}
		}
		switch {
		case fi.Mode().IsRegular() && filepath.Base(a) == results.ResultsFile:
			// Read as the folder it is in: an incomplete one is completed from requests.jsonl.
			res, warnings, err := results.ReadOut(ctx, filepath.Dir(a))
			if err != nil {
				return nil, usageError{err}
			}
			if err := add(a, res, warnings); err != nil {
				return nil, err
			}
			continue
		case fi.Mode().IsRegular():
			res, err := results.ReadContext(ctx, a)
			if err != nil {
				return nil, usageError{err}
			}
			if err := add(a, res, nil); err != nil {
				return nil, err
			}
			continue
		case !fi.IsDir():
			return nil, usagef("%s: not a results file or a folder (%s)", a, fi.Mode().Type())
		}
		dirs, err := outDirs(ctx, a)
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			res, warnings, err := results.ReadOut(ctx, d)
			if err != nil {
				return nil, usageError{err}
			}
			if err := add(filepath.Join(d, results.ResultsFile), res, warnings); err != nil {
				return nil, err
			}
		}
	}
	results.FillRebuiltHeads(inputs)
	return inputs, nil
}

// validNames refuses a results file whose lane or case names are not names (checks.ValidName):
// an uploaded results file is the pull request's to write, and its names reach headings,
// status contexts and logs.
func validNames(res *checks.Result) error {
	var errs []error
	if res.Lane != "" {
		if err := checks.ValidName(res.Lane); err != nil {
			errs = append(errs, fmt.Errorf("lane: %w", err))
		}
	}
	for i, c := range res.Cases {
		if err := checks.ValidName(c.ID); err != nil {
			errs = append(errs, fmt.Errorf("cases[%d].id: %w", i, err))
		}
		if c.Lane != "" {
			if err := checks.ValidName(c.Lane); err != nil {
				errs = append(errs, fmt.Errorf("case %s: lane: %w", c.ID, err))
			}
		}
	}
	for i, d := range res.Deselected {
		if err := checks.ValidName(d.Case); err != nil {
			errs = append(errs, fmt.Errorf("deselected[%d].case: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// outDirs are the folders at or below root that hold a run's results.json or requests.jsonl
// (regular files), sorted.
func outDirs(ctx context.Context, root string) ([]string, error) {
	var found []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == results.ArtifactsDir || d.Name() == results.ServersDir) {
			return filepath.SkipDir // request outputs and server logs, never results
		}
		if d.Type().IsRegular() && (d.Name() == results.ResultsFile || d.Name() == results.RequestsFile) {
			if dir := filepath.Dir(p); !slices.Contains(found, dir) {
				found = append(found, dir)
			}
		}
		return nil
	})
	if err != nil {
		return nil, usageError{err}
	}
	if len(found) == 0 {
		return nil, usagef("%s: no %s in this folder or below", root, results.ResultsFile)
	}
	slices.Sort(found)
	return found, nil
}
