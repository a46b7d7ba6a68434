package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/history"
	"github.com/diffusion-check/diffusion-check/results"
)

// historyCmd keeps the history store of a suite's runs (docs/history.md): append a report's
// values, draw the page, propose tightened baselines.
func historyCmd(ctx context.Context, e env, args []string) (int, error) {
	if len(args) == 0 {
		return 0, usagef("name a subcommand: append, page, tighten or pools")
	}
	switch args[0] {
	case "append":
		return historyAppend(ctx, e, args[1:])
	case "page":
		return historyPage(ctx, e, args[1:])
	case "tighten":
		return historyTighten(ctx, e, args[1:])
	case "pools":
		return historyPools(ctx, e, args[1:])
	case "-h", "-help", "--help":
		// Every subcommand's flags, one after the other.
		for _, sub := range []func(context.Context, env, []string) (int, error){historyAppend, historyPage, historyTighten, historyPools} {
			if _, err := sub(ctx, e, []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
				return 0, err
			}
			fmt.Fprintln(e.stdout)
		}
		return exitOK, flag.ErrHelp
	}
	return 0, usagef("unknown subcommand %q: want append, page, tighten or pools", args[0])
}

// historyAppendOptions are the flags of history append.
type historyAppendOptions struct {
	store, commit, kind, runID, runner, date string
	pr                                       int
	keep, keepPR                             int
}

func historyAppend(ctx context.Context, e env, args []string) (int, error) {
	var o historyAppendOptions
	fs := newFlags("history append", e)
	fs.StringVar(&o.store, "store", "", "history store `DIR` (a checkout of the data branch)")
	fs.StringVar(&o.commit, "commit", "", "`SHA` of the commit the results measured (default: the results' commit)")
	fs.StringVar(&o.kind, "kind", string(history.KindDefault),
		"`KIND` of run: default (the default branch: the trend line and the evidence for tightening) or pr (a point beside it)")
	fs.IntVar(&o.pr, "pr", 0, "the pull request's `NUMBER`, with --kind pr")
	fs.StringVar(&o.runID, "run-id", "", "`ID` of the workflow run and attempt, e.g. 1234567-1 (required: it makes the file name unique)")
	fs.StringVar(&o.runner, "runner", "", "`NAME` of the machine that ran it")
	fs.StringVar(&o.date, "date", "", "`TIME` of the run, RFC 3339 (default: when the results finished)")
	fs.IntVar(&o.keep, "keep", 200, "keep the newest `N` default-branch runs of each series, prune older ones")
	fs.IntVar(&o.keepPR, "keep-pr", 100, "keep the newest `N` pull-request runs of each series")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if o.store == "" || o.runID == "" {
		return 0, usagef("--store and --run-id are required")
	}
	if o.keep < 1 || o.keepPR < 1 {
		return 0, usagef("--keep and --keep-pr: want at least 1")
	}
	var date time.Time
	if o.date != "" {
		t, err := time.Parse(time.RFC3339, o.date)
		if err != nil {
			return 0, usagef("--date %q: want RFC 3339, e.g. 2026-08-21T10:00:00Z", o.date)
		}
		date = t
	}
	inputs, err := readInputs(ctx, e, fs.Args())
	if err != nil {
		return 0, err
	}
	// One entry per suite, lane and GPU class: the partitions of a lane together.
	type key struct{ suite, lane, gpu string }
	groups := map[key][]*results.Result{}
	var order []key
	for _, in := range inputs {
		k := key{in.Result.Suite, in.Result.Lane, in.Result.GPU}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], in.Result)
	}
	for _, k := range order {
		run, err := history.FromResults(groups[k], history.Meta{Commit: o.commit, Kind: history.Kind(o.kind), PR: o.pr, RunID: o.runID, Runner: o.runner, Date: date})
		if err != nil {
			return 0, usageError{fmt.Errorf("suite %s lane %s: %w", k.suite, k.lane, err)}
		}
		path, err := history.Write(o.store, run)
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(e.stderr, "wrote %s (%d cases)\n", path, len(run.Cases))
	}
	removed, err := history.Prune(ctx, o.store, history.Keep{Default: o.keep, PR: o.keepPR})
	for _, p := range removed {
		fmt.Fprintf(e.stderr, "pruned %s\n", p)
	}
	return exitOK, err
}

// loadStore reads the store and prints a warning for each file left out.
func loadStore(ctx context.Context, e env, store string) ([]*history.Run, error) {
	runs, warnings, err := history.Load(ctx, store)
	if err != nil {
		return nil, usageError{err}
	}
	for _, w := range warnings {
		fmt.Fprintln(e.stderr, "warning: left out:", w)
	}
	return runs, nil
}

func historyPage(ctx context.Context, e env, args []string) (int, error) {
	var store, out, title string
	fs := newFlags("history page", e)
	fs.StringVar(&store, "store", "", "history store `DIR`")
	fs.StringVar(&out, "out", "", "HTML `FILE` to write (e.g. index.html of the Pages site)")
	fs.StringVar(&title, "title", "diffusion-check history", "the page's `TITLE`")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if store == "" || out == "" {
		return 0, usagef("--store and --out are required")
	}
	runs, err := loadStore(ctx, e, store)
	if err != nil {
		return 0, err
	}
	var b bytes.Buffer
	if err := history.Page(&b, runs, history.PageOptions{Title: title, Generated: time.Now()}); err != nil {
		return 0, fmt.Errorf("render the history page: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return 0, fmt.Errorf("write the history page: %w", err)
	}
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		return 0, fmt.Errorf("write the history page: %w", err)
	}
	fmt.Fprintf(e.stderr, "wrote %s (%d runs)\n", out, len(runs))
	return exitOK, nil
}

// historySeriesFlags are the flags that history tighten and history pools share: the store,
// the baseline file, the series to read and where its evidence goes.
type historySeriesFlags struct {
	store, baseline, out, markdown, pageURL string
	suite, lane, gpu                        string
}

// register adds the shared flags to fs, with the usage of --baseline and --out.
func (o *historySeriesFlags) register(fs *flag.FlagSet, baselineUsage, outUsage string) {
	fs.StringVar(&o.store, "store", "", "history store `DIR`")
	fs.StringVar(&o.baseline, "baseline", "", baselineUsage)
	fs.StringVar(&o.out, "out", "", outUsage)
	fs.StringVar(&o.markdown, "markdown", "", "write the evidence, as Markdown, to `FILE` (the pull request's body)")
	fs.StringVar(&o.pageURL, "page-url", "", "`URL` of the history page, for links to each metric's chart")
	fs.StringVar(&o.suite, "suite", "", "the series' suite `NAME` (needed when the store has several series)")
	fs.StringVar(&o.lane, "lane", "", "the series' `LANE`")
	fs.StringVar(&o.gpu, "gpu", "", "the series' GPU `CLASS`")
}

// load reads what history tighten and history pools both start from: the baseline file, the
// store's runs and the one series the flags pick.
func (o *historySeriesFlags) load(ctx context.Context, e env) (*baselines.File, []*history.Run, history.Series, error) {
	base, err := baselines.Load(o.baseline)
	if err != nil {
		return nil, nil, history.Series{}, usageError{err}
	}
	runs, err := loadStore(ctx, e, o.store)
	if err != nil {
		return nil, nil, history.Series{}, err
	}
	series, err := o.series(runs)
	return base, runs, series, err
}

// historyTightenOptions are the flags of history tighten.
type historyTightenOptions struct {
	historySeriesFlags
	rule history.Rule
}

func historyTighten(ctx context.Context, e env, args []string) (int, error) {
	o := historyTightenOptions{rule: history.DefaultRule}
	fs := newFlags("history tighten", e)
	o.register(fs, "the perf baseline `FILE` to tighten",
		"where to write the tightened baseline `FILE` (may be --baseline itself); written only when something changes")
	fs.IntVar(&o.rule.Runs, "runs", o.rule.Runs, "`N`: the last N default-branch runs must all be well under the baseline")
	fs.Float64Var(&o.rule.Sigmas, "sigmas", o.rule.Sigmas, "`K`: the worst of N must be K robust standard deviations (1.4826 × MAD of the N) under the baseline")
	fs.BoolVar(&o.rule.AllowLoosen, "allow-loosen", false, "also raise a value whose last N runs were all above it")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if o.store == "" || o.baseline == "" || o.out == "" {
		return 0, usagef("--store, --baseline and --out are required")
	}
	if o.rule.Runs < 2 || !(o.rule.Sigmas >= 0) || math.IsInf(o.rule.Sigmas, 0) {
		return 0, usagef("--runs: want at least 2; --sigmas: want a number ≥ 0")
	}
	base, runs, series, err := o.load(ctx, e)
	if err != nil {
		return 0, err
	}
	o.rule.MinGain = base.ImprovementThreshold
	out, err := history.Propose(runs, series, o.rule, base.Value)
	if err != nil {
		return 0, usageError{err}
	}
	var set []baselines.Change
	for _, p := range out.Proposals {
		set = append(set, baselines.Change{Scenario: p.Case, Metric: p.Metric, Old: p.Old, New: p.New})
	}
	var changes []baselines.Change
	if len(set) > 0 {
		t, err := baselines.Tighten(base, set)
		if err != nil {
			return 0, err
		}
		changes = t.Changes
		if err := os.WriteFile(o.out, t.File.Marshal(), 0o644); err != nil {
			return 0, fmt.Errorf("write baseline: %w", err)
		}
		fmt.Fprintf(e.stderr, "wrote %s (%d values)\n", o.out, len(changes))
		if err := baselines.WriteChanges(e.stdout, changes); err != nil {
			return 0, err
		}
	} else {
		fmt.Fprintln(e.stdout, "nothing to tighten")
	}
	for _, n := range out.Noisy {
		fmt.Fprintln(e.stdout, "noisy:", n)
	}
	for _, s := range out.Skipped {
		fmt.Fprintln(e.stderr, "not proposed:", s)
	}
	if o.markdown != "" {
		md := history.ProposalMarkdown(series, o.baseline, o.rule, out, o.pageURL)
		if err := os.WriteFile(o.markdown, []byte(md), 0o644); err != nil {
			return 0, fmt.Errorf("write markdown: %w", err)
		}
	}
	if err := e.setOutputs(map[string]any{"changed": fmt.Sprint(len(changes) > 0), "noisy": fmt.Sprint(len(out.Noisy))}); err != nil {
		return 0, err
	}
	return exitOK, nil
}

// series picks the series to read: the one the flags name, or the store's only one.
func (o *historySeriesFlags) series(runs []*history.Run) (history.Series, error) {
	var found []history.Series
	for _, r := range runs {
		s := r.SeriesOf()
		if o.suite != "" && s.Suite != o.suite || o.lane != "" && s.Lane != o.lane || o.gpu != "" && !strings.EqualFold(s.GPU, o.gpu) {
			continue
		}
		if !slices.Contains(found, s) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return history.Series{}, usagef("the store %s has no runs of the series asked for", o.store)
	case 1:
		return found[0], nil
	}
	var names []string
	for _, s := range found {
		names = append(names, s.String())
	}
	return history.Series{}, usageError{errors.New("the store has several series; pick one with --suite, --lane and --gpu:\n" + strings.Join(names, "\n"))}
}

// historyPoolsOptions are the flags of history pools.
type historyPoolsOptions struct {
	historySeriesFlags
	rule history.PoolRule
}

func historyPools(ctx context.Context, e env, args []string) (int, error) {
	o := historyPoolsOptions{rule: history.DefaultPoolRule}
	fs := newFlags("history pools", e)
	o.register(fs, "the perf baseline `FILE` whose shared expected_e2e_ms the pools are compared with (it is not changed)",
		"write the proposed runner_overrides entries, as JSON in the baseline file's shape, to `FILE`; written only when there are some")
	fs.Func("prefix", "a pool's runner-name `PREFIX` (repeatable; a runner belongs to the longest it begins with, else to a pool of its own name)",
		func(v string) error {
			if strings.TrimSpace(v) == "" {
				return errors.New("empty prefix")
			}
			o.rule.Prefixes = append(o.rule.Prefixes, v)
			return nil
		})
	fs.IntVar(&o.rule.MinRuns, "min-runs", o.rule.MinRuns, "`N`: a pool with fewer default-branch runs is too new to calibrate")
	fs.Float64Var(&o.rule.Alpha, "alpha", o.rule.Alpha, "`P`: the one-sided Mann-Whitney p-value under which a pool is slower than the rest")
	fs.Float64Var(&o.rule.MinRatio, "min-ratio", o.rule.MinRatio, "`R`: the smallest slowdown (pool median / rest median) worth an override")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if o.store == "" || o.baseline == "" {
		return 0, usagef("--store and --baseline are required")
	}
	if o.rule.MinRuns < 2 || !(o.rule.Alpha > 0 && o.rule.Alpha < 1) || !(o.rule.MinRatio >= 1) || math.IsInf(o.rule.MinRatio, 0) {
		return 0, usagef("--min-runs: want at least 2; --alpha: want 0 < P < 1; --min-ratio: want R ≥ 1")
	}
	base, runs, series, err := o.load(ctx, e)
	if err != nil {
		return 0, err
	}
	out := history.Pools(runs, series, o.rule, base.Value)
	for _, x := range out.Overrides {
		fmt.Fprintf(e.stdout, "override: %s %s expected_e2e_ms %.2f (shared %.2f, ×%.2f; pool median %.0f ms vs %.0f ms, p = %.2g, %d runs)\n",
			x.Prefix, x.Case, x.Value, x.Shared, x.Value/x.Shared, x.PoolMedian, x.RestMedian, x.P, len(x.Runs))
	}
	if len(out.Overrides) == 0 {
		fmt.Fprintln(e.stdout, "no pool needs an override")
	}
	for _, t := range out.TooNew {
		fmt.Fprintf(e.stdout, "too new to calibrate: %s (%s; %d runs, %d needed)\n", t.Prefix, strings.Join(t.Runners, ", "), t.Runs, o.rule.MinRuns)
	}
	for _, c := range out.Checked {
		fmt.Fprintln(e.stderr, "no override:", c)
	}
	if out.Unnamed > 0 {
		fmt.Fprintf(e.stderr, "left out: %d runs whose cases name no runner (recorded before machines were, without --runner)\n", out.Unnamed)
	}
	if o.out != "" && len(out.Overrides) > 0 {
		if err := os.WriteFile(o.out, out.OverridesJSON(), 0o644); err != nil {
			return 0, fmt.Errorf("write runner_overrides: %w", err)
		}
		fmt.Fprintf(e.stderr, "wrote %s (%d entries)\n", o.out, len(out.Overrides))
	}
	if o.markdown != "" {
		md := history.PoolsMarkdown(series, o.baseline, o.rule, out, o.pageURL)
		if err := os.WriteFile(o.markdown, []byte(md), 0o644); err != nil {
			return 0, fmt.Errorf("write markdown: %w", err)
		}
	}
	if err := e.setOutputs(map[string]any{"overrides": fmt.Sprint(len(out.Overrides)), "too_new": fmt.Sprint(len(out.TooNew))}); err != nil {
		return 0, err
	}
	return exitOK, nil
}
