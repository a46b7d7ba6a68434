package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/runner"
)

// readResults reads the results named on a command line: results.json files, or folders that
// hold them at any depth (an artifact download puts each job's results in a folder of its own).
func readResults(args []string) ([]checks.Input, error) {
	if len(args) == 0 {
		return nil, usagef("name at least one results.json or folder holding one")
	}
	var files []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, usageError{err}
		}
		if !fi.IsDir() {
			files = append(files, a)
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "artifacts" {
				return filepath.SkipDir // request outputs, never results
			}
			if !d.IsDir() && d.Name() == runner.ResultsFile {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, usageError{err}
		}
		if len(found) == 0 {
			return nil, usagef("%s: no %s in this folder or below", a, runner.ResultsFile)
		}
		slices.Sort(found)
		files = append(files, found...)
	}
	var inputs []checks.Input
	for _, p := range files {
		res, err := runner.ReadResults(p)
		if err != nil {
			return nil, usageError{err}
		}
		if err := validNames(res); err != nil {
			return nil, usagef("%s: %w", p, err)
		}
		inputs = append(inputs, checks.Input{File: p, Result: res})
	}
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
