package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
)

// baselineOptions are the flags of baseline.
type baselineOptions struct {
	out         string
	from        string
	markdown    string
	allowFailed bool
}

func (o *baselineOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.out, "out", "", "baseline `FILE` to write (SGLang perf_baselines/<gpu>.json format)")
	fs.StringVar(&o.from, "from", "", "existing baseline `FILE` whose tolerances, metadata and other scenarios are kept (default: --out when it exists)")
	fs.StringVar(&o.markdown, "markdown", "", "also write the table, as Markdown, to `FILE` (a pull request's body)")
	fs.BoolVar(&o.allowFailed, "allow-failed", false, "write the baseline even from results with failed, errored, cancelled or incomplete cases (each is listed as a warning)")
}

// baselineCmd merges results (every partition and repetition) into an SGLang perf baseline
// file that keeps the worst value of every metric, and prints old → new per metric and how
// many requests × partitions each scenario's values came from.
func baselineCmd(_ context.Context, e env, args []string) (int, error) {
	var o baselineOptions
	fs := newFlags("baseline", e)
	o.register(fs)
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if o.out == "" {
		return 0, usagef("--out is required")
	}
	if fs.NArg() == 0 {
		return 0, usagef("name at least one results.json or folder holding one")
	}
	base, err := o.base()
	if err != nil {
		return 0, err
	}
	results, err := o.results(e, fs.Args())
	if err != nil {
		return 0, err
	}
	reg, err := baselines.Regenerate(base, results)
	if err != nil {
		return 0, err
	}
	for _, w := range reg.Warnings {
		fmt.Fprintln(e.stderr, "warning:", w)
	}
	if len(reg.Changes) == 0 {
		return 0, errors.New("no case in the results has perf measurements; nothing to write")
	}
	if err := os.WriteFile(o.out, reg.File.Marshal(), 0o644); err != nil {
		return 0, fmt.Errorf("write baseline: %w", err)
	}
	var table bytes.Buffer
	if err := baselines.WriteChanges(&table, reg.Changes); err != nil {
		return 0, err
	}
	writeSources(&table, reg.Changes, baselines.Sources(results))
	if _, err := e.stdout.Write(table.Bytes()); err != nil {
		return 0, err
	}
	if o.markdown != "" {
		md := fmt.Sprintf("Perf baseline `%s`: the worst value of every metric over %d results files, old → new.\n\n```text\n%s```\n", o.out, len(results), table.String())
		if err := os.WriteFile(o.markdown, []byte(md), 0o644); err != nil {
			return 0, fmt.Errorf("write markdown table: %w", err)
		}
		if err := e.setOutputs(map[string]any{"report_path": o.markdown}); err != nil {
			return 0, err
		}
	}
	fmt.Fprintf(e.stderr, "wrote %s (%d metrics from %d results files)\n", o.out, len(reg.Changes), len(results))
	return exitOK, nil
}

// base reads the baseline file whose tolerances and other scenarios are kept, nil for none.
func (o *baselineOptions) base() (*baselines.File, error) {
	src := o.from
	if src == "" {
		if _, err := os.Stat(o.out); err == nil {
			src = o.out
		}
	}
	if src == "" {
		return nil, nil
	}
	f, err := baselines.Load(src)
	if err != nil {
		return nil, usageError{err}
	}
	return f, nil
}

// results reads the results and checks that they may become a baseline: the same merge
// rules as report (conflicting duplicates are an error, and so is a plan whose partitions
// did not all arrive), and every case passed with all its requests measured, unless
// --allow-failed.
func (o *baselineOptions) results(e env, paths []string) ([]*checks.Result, error) {
	inputs, err := readResults(paths)
	if err != nil {
		return nil, err
	}
	if _, err := checks.Merge(inputs); err != nil {
		return nil, usageError{err}
	}
	var missing []string
	for _, probs := range checks.PlanProblems(inputs) {
		missing = append(missing, probs...)
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, usagef("the results do not cover their plan:\n%s", strings.Join(missing, "\n"))
	}
	var results []*checks.Result
	for _, in := range inputs {
		results = append(results, in.Result)
	}
	if unfit := baselines.Unfit(results); len(unfit) > 0 {
		if !o.allowFailed {
			return nil, usagef("refusing to write a baseline from failed or incomplete runs (--allow-failed to write it anyway):\n%s", strings.Join(unfit, "\n"))
		}
		for _, u := range unfit {
			fmt.Fprintln(e.stderr, "warning (--allow-failed):", u)
		}
	}
	return results, nil
}

// writeSources prints, under the table, how many requests × partitions the values of each
// scenario written were the worst of.
func writeSources(w *bytes.Buffer, changes []baselines.Change, sources map[string]baselines.Source) {
	written := map[string]bool{}
	for _, c := range changes {
		written[c.Scenario] = true
	}
	w.WriteString("\nvalues are the worst of:\n")
	for _, id := range slices.Sorted(maps.Keys(written)) {
		fmt.Fprintf(w, "  %s: %s\n", id, sources[id])
	}
}
