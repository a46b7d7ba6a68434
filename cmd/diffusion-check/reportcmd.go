package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/report"
	"github.com/diffusion-check/diffusion-check/runner"
)

func reportCmd(_ context.Context, e env, args []string) (int, error) {
	fs := newFlags("report", e)
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() == 0 {
		return 0, usagef("name at least one results.json or folder holding one")
	}
	worst := exitOK
	for _, p := range fs.Args() {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			p = filepath.Join(p, "results.json")
		}
		res, err := runner.ReadResults(p)
		if err != nil {
			return 0, usageError{err}
		}
		if fs.NArg() > 1 {
			fmt.Fprintf(e.stdout, "== %s\n", p)
		}
		if err := report.Table(e.stdout, res); err != nil {
			return 0, err
		}
		worst = max(worst, checks.ExitCode(res.Status))
	}
	return worst, nil
}
