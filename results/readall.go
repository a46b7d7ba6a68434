package results

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// ReadAll reads the results a command line names: results.json files, or folders that hold
// runs' output folders at any depth (an artifact download puts each job's results in a folder
// of its own). An output folder whose results.json is marked incomplete (the run ended before
// its final write) or missing is read from its requests.jsonl too (readOut); what was rebuilt
// comes back as warnings, which are returned with an error too. The results are the pull
// request's to write: only regular files are read, each at most maxInputBytes, a lane or case
// whose name is no name (ValidName) is refused naming the file, and reading stops when
// ctx ends. The heads of results rebuilt from requests.jsonl alone are filled from the other
// inputs of their plan (fillRebuiltHeads).
func ReadAll(ctx context.Context, paths []string) (inputs []Input, warnings []error, err error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("name at least one results.json or folder holding one")
	}
	add := func(file string, res *Result, ws []error) error {
		if err := validNames(res); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		warnings = append(warnings, ws...)
		inputs = append(inputs, Input{File: file, Result: res})
		return nil
	}
	for _, a := range paths {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, warnings, err
		}
		switch {
		case fi.Mode().IsRegular() && filepath.Base(a) == ResultsFile:
			// Read as the folder it is in: an incomplete one is completed from requests.jsonl.
			res, ws, err := readOut(ctx, filepath.Dir(a))
			if err == nil {
				err = add(a, res, ws)
			}
			if err != nil {
				return nil, warnings, err
			}
			continue
		case fi.Mode().IsRegular():
			res, err := ReadContext(ctx, a)
			if err == nil {
				err = add(a, res, nil)
			}
			if err != nil {
				return nil, warnings, err
			}
			continue
		case !fi.IsDir():
			return nil, warnings, fmt.Errorf("%s: not a results file or a folder (%s)", a, fi.Mode().Type())
		}
		dirs, err := outDirs(ctx, a)
		if err != nil {
			return nil, warnings, err
		}
		for _, d := range dirs {
			res, ws, err := readOut(ctx, d)
			if err == nil {
				err = add(filepath.Join(d, ResultsFile), res, ws)
			}
			if err != nil {
				return nil, warnings, err
			}
		}
	}
	fillRebuiltHeads(inputs)
	return inputs, warnings, nil
}

// validNames refuses a results file whose lane or case names are not names (ValidName):
// an uploaded results file is the pull request's to write, and its names reach headings,
// status contexts and logs.
func validNames(res *Result) error {
	var errs []error
	if res.Lane != "" {
		if err := ValidName(res.Lane); err != nil {
			errs = append(errs, fmt.Errorf("lane: %w", err))
		}
	}
	for i, c := range res.Cases {
		if err := ValidName(c.ID); err != nil {
			errs = append(errs, fmt.Errorf("cases[%d].id: %w", i, err))
		}
		if c.Lane != "" {
			if err := ValidName(c.Lane); err != nil {
				errs = append(errs, fmt.Errorf("case %s: lane: %w", c.ID, err))
			}
		}
	}
	for i, d := range res.Deselected {
		if err := ValidName(d.Case); err != nil {
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
		if d.IsDir() && (d.Name() == ArtifactsDir || d.Name() == ServersDir) {
			return filepath.SkipDir // request outputs and server logs, never results
		}
		if d.Type().IsRegular() && (d.Name() == ResultsFile || d.Name() == RequestsFile) {
			if dir := filepath.Dir(p); !slices.Contains(found, dir) {
				found = append(found, dir)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("%s: no %s in this folder or below", root, ResultsFile)
	}
	slices.Sort(found)
	return found, nil
}
