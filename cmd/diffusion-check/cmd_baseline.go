package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/results"
)

// baselineOptions are the flags of baseline.
type baselineOptions struct {
	out         string
	from        string
	markdown    string
	allowFailed bool
	allFields   bool
}

func (o *baselineOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.out, "out", "",
		"baseline `FILE` to write (SGLang perf_baselines/<gpu>.json format); the spread of every metric goes beside it, in <gpu>.spread.json")
	fs.StringVar(&o.from, "from", "", "existing baseline `FILE` whose tolerances, metadata and other scenarios are kept (default: --out when it exists)")
	fs.StringVar(&o.markdown, "markdown", "", "also write the table, as Markdown, to `FILE` (a pull request's body)")
	fs.BoolVar(&o.allFields, "all-fields", false, "write into new scenarios every measured key, also those SGLang's files do not have "+
		"(expected_load_ms, *_allocated_mb, *_host_anon_mb); by default only the keys SGLang's baseline dump writes and those the file already uses")
	fs.BoolVar(&o.allowFailed, "allow-failed", false,
		"write the baseline even from results with failed, errored, cancelled or incomplete cases (each is listed as a warning)")
}

// baselineCmd merges results (every partition and repetition) into an SGLang perf baseline
// file that keeps the worst value of every metric, and prints old → new per metric and how
// many requests × partitions each scenario's values came from. Beside the baseline file it
// writes the spread sidecar (baselines.SpreadPath): each metric's n, min, median, max and
// median absolute deviation over the same requests, which SGLang's file has no place for.
func baselineCmd(ctx context.Context, e env, args []string) (int, error) {
	var o baselineOptions
	fs := newFlags("baseline", e)
	o.register(fs)
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if o.out == "" {
		return 0, usagef("--out is required")
	}
	if baselines.IsSpreadPath(o.out) {
		return 0, usagef("--out %s names a spread file; give the baseline file (%s), the spread goes beside it",
			o.out, strings.TrimSuffix(o.out, baselines.SpreadSuffix)+".json")
	}
	if fs.NArg() == 0 {
		return 0, usagef("name at least one results.json or folder holding one")
	}
	base, err := o.base()
	if err != nil {
		return 0, err
	}
	baseSpread, err := o.baseSpread()
	if err != nil {
		return 0, err
	}
	runs, err := o.results(ctx, e, fs.Args())
	if err != nil {
		return 0, err
	}
	reg, err := baselines.Regenerate(base, runs, baselines.RegenerateOptions{AllFields: o.allFields})
	if err != nil {
		return 0, err
	}
	for _, w := range reg.Warnings {
		fmt.Fprintln(e.stderr, "warning:", w)
	}
	if len(reg.Changes) == 0 {
		return 0, errors.New("no case in the results has perf measurements; nothing to write")
	}
	// A first baseline goes into a folder that does not exist yet (perf_baselines/h200.json).
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return 0, fmt.Errorf("create the baseline's folder: %w", err)
	}
	if err := os.WriteFile(o.out, reg.File.Marshal(), 0o644); err != nil {
		return 0, fmt.Errorf("write baseline: %w", err)
	}
	spreadPath, spreadMetrics, err := writeSpread(o.out, baseSpread, runs)
	if err != nil {
		return 0, err
	}
	var table bytes.Buffer
	if err := baselines.WriteChanges(&table, reg.Changes); err != nil {
		return 0, err
	}
	writeSources(&table, reg.Changes, baselines.Sources(runs))
	if _, err := e.stdout.Write(table.Bytes()); err != nil {
		return 0, err
	}
	if o.markdown != "" {
		md := fmt.Sprintf("Perf baseline `%s`: the worst value of every metric over %d results files, old → new.\n\n```text\n%s```\n",
			o.out, len(runs), table.String())
		if err := os.WriteFile(o.markdown, []byte(md), 0o644); err != nil {
			return 0, fmt.Errorf("write markdown table: %w", err)
		}
		if err := e.setOutputs(map[string]any{"report_path": o.markdown}); err != nil {
			return 0, err
		}
	}
	fmt.Fprintf(e.stderr, "wrote %s (%d metrics from %d results files)\n", o.out, len(reg.Changes), len(runs))
	if spreadPath != "" {
		fmt.Fprintf(e.stderr, "wrote %s (the spread of %d metrics)\n", spreadPath, spreadMetrics)
	}
	return exitOK, nil
}

// baseSpread reads the spread sidecar of the file base reads (--from, else --out when it
// exists), whose scenarios the results do not measure are kept; nil when there is none. A
// malformed one is an error: it would otherwise be overwritten without a word.
func (o *baselineOptions) baseSpread() (*baselines.SpreadFile, error) {
	src := cmp.Or(o.from, o.out)
	f, err := baselines.LoadSpread(baselines.SpreadPath(src))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, usageError{err}
	}
	return f, nil
}

// writeSpread writes the spread sidecar of the baseline file out and returns its path and
// how many metrics it holds for the scenarios the results measured; "" when there was
// nothing to write.
func writeSpread(out string, base *baselines.SpreadFile, runs []*results.Result) (string, int, error) {
	gpu := ""
	for _, r := range runs {
		gpu = cmp.Or(gpu, r.GPU)
	}
	sf := baselines.RegenerateSpread(base, gpu, runs)
	if sf == nil {
		return "", 0, nil
	}
	data, err := sf.Marshal()
	if err != nil {
		return "", 0, err
	}
	path := baselines.SpreadPath(out)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", 0, fmt.Errorf("write spread file: %w", err)
	}
	n := 0
	for id := range baselines.Sources(runs) {
		n += len(sf.Scenarios[id])
	}
	return path, n, nil
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
func (o *baselineOptions) results(ctx context.Context, e env, paths []string) ([]*results.Result, error) {
	inputs, err := readInputs(ctx, e, paths)
	if err != nil {
		return nil, err
	}
	if _, err := mergeLanes(inputs); err != nil {
		return nil, err
	}
	var missing []string
	for _, probs := range results.PlanProblems(inputs) {
		missing = append(missing, probs...)
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, usagef("the results do not cover their plan:\n%s", strings.Join(missing, "\n"))
	}
	var runs []*results.Result
	for _, in := range inputs {
		runs = append(runs, in.Result)
	}
	if unfit := baselines.Unfit(runs); len(unfit) > 0 {
		if !o.allowFailed {
			return nil, usagef("refusing to write a baseline from failed or incomplete runs (--allow-failed to write it anyway):\n%s", strings.Join(unfit, "\n"))
		}
		for _, u := range unfit {
			fmt.Fprintln(e.stderr, "warning (--allow-failed):", u)
		}
	}
	return runs, nil
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
