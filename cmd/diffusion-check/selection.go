package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/plan"
	"github.com/diffusion-check/diffusion-check/report"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/selection"
	"github.com/diffusion-check/diffusion-check/suite"
)

// selectOptions are the flags of test-impact selection, shared by plan and by run (which
// plans again when it has no plan file, and must then make the same selection).
type selectOptions struct {
	changedFiles string
	changedSince string
	repoRoot     string
	// fromPR takes the changed files from the pull request of the workflow's event (plan only:
	// the action's select: auto).
	fromPR bool
}

func (o *selectOptions) register(fs *flag.FlagSet, withPR bool) {
	fs.StringVar(&o.changedFiles, "changed-files", "",
		"test-impact selection: plan only the cases the changed paths listed in `FILE` can affect (one repository path a line; - reads stdin)")
	fs.StringVar(&o.changedSince, "changed-since", "",
		"test-impact selection: the changed paths are those of \"git diff\" against the merge base of `REF` and HEAD")
	fs.StringVar(&o.repoRoot, "repo-root", "",
		"the repository root `DIR` that changed paths and paths: globs are relative to (default: git rev-parse --show-toplevel in the suite's folder)")
	if withPR {
		fs.BoolVar(
			&o.fromPR,
			"changed-in-pr",
			false,
			"test-impact selection: the changed paths are the files of the event's pull request (GitHub API; needs GITHUB_TOKEN, GITHUB_REPOSITORY, "+
				"GITHUB_EVENT_PATH); more than GitHub lists, or an event that is not a pull request, selects every case",
		)
	}
}

// active reports whether a selection was asked for, after checking that at most one source was.
func (o *selectOptions) active() (bool, error) {
	n := 0
	for _, on := range []bool{o.changedFiles != "", o.changedSince != "", o.fromPR} {
		if on {
			n++
		}
	}
	if n > 1 {
		return false, usagef("give one of --changed-files, --changed-since and --changed-in-pr")
	}
	if n == 0 && o.repoRoot != "" {
		return false, usagef("--repo-root applies to test-impact selection: give --changed-files, --changed-since or --changed-in-pr too")
	}
	return n == 1, nil
}

// selectedPlan plans a lane of s into n partitions (or, with targetS > 0, as many as keep each
// near targetS, at most maxJobs), keeping only the cases the selection selects when one is
// asked for. It says on stderr what the selection left out, and why.
func (o *selectOptions) selectedPlan(ctx context.Context, e env, s *suite.Suite, lane, gpu string, n int, targetS float64, maxJobs int) (*plan.Plan, error) {
	items, err := plan.SuiteItems(s, lane, gpu)
	if err != nil {
		return nil, usageError{err}
	}
	on, err := o.active()
	if err != nil {
		return nil, err
	}
	if !on {
		return makePlan(s, lane, items, n, targetS, maxJobs), nil
	}
	sel, changed, root, err := o.changes(ctx, e, s)
	if err != nil {
		return nil, err
	}
	var out *selection.Outcome
	if sel.All != "" {
		out = &selection.Outcome{}
		for _, c := range s.CasesFor(lane) {
			out.Selected = append(out.Selected, selection.Pick{Case: c.ID, Lane: c.Lane, Reason: "every case runs: " + sel.All})
		}
	} else if out, err = selection.Select(selection.Input{Suite: s, Lane: lane, Root: root, Changed: changed}); err != nil {
		return nil, usageError{fmt.Errorf("test-impact selection: %w", err)}
	}
	p := makePlan(s, lane, plan.KeepItems(items, out.IDs()), n, targetS, maxJobs)
	p.SetSelection(sel, out)
	return p, nil
}

func makePlan(s *suite.Suite, lane string, items []plan.Item, n int, targetS float64, maxJobs int) *plan.Plan {
	if targetS > 0 {
		n = plan.PartitionsFor(items, targetS, maxJobs)
	}
	return plan.Make(s.Name, lane, items, n)
}

// tellSelection says on stderr (and in the job summary, when there is one) what a plan's
// selection kept and left out.
func tellSelection(e env, p *plan.Plan) {
	sel := p.Selection
	if sel == nil {
		return
	}
	var b strings.Builder
	if sel.All != "" {
		fmt.Fprintf(&b, "select: all %d cases: %s\n", sel.Of, sel.All)
	} else {
		fmt.Fprintf(&b, "select: %d of %d cases selected by %s (%s)\n", sel.Selected, sel.Of, words.Plural(sel.ChangedFiles, "changed path"), sel.Source)
		for _, pk := range p.SelectedBy {
			fmt.Fprintf(&b, "select: + %s: %s\n", pk.Case, pk.Reason)
		}
		for _, d := range p.Deselected {
			fmt.Fprintf(&b, "select: - %s: %s\n", d.Case, d.Reason)
		}
		if sel.Selected == 0 {
			fmt.Fprintf(&b, "select: nothing to run: the plan is one empty partition, whose run checks nothing and passes\n")
		}
	}
	fmt.Fprint(e.stderr, b.String())
	if e.github().StepSummary != "" {
		e.action().AddStepSummary(report.SelectionSummary(sel, p.Deselected))
	}
}

// changes reads the changed paths from the source the flags name, and the repository root
// they are relative to. sel.All is set instead of paths when everything must run.
func (o *selectOptions) changes(ctx context.Context, e env, s *suite.Suite) (sel results.Selection, changed []string, root string, err error) {
	if o.fromPR {
		sel, changed, err = pullChanges(ctx, e)
		if err != nil || sel.All != "" {
			return sel, nil, "", err
		}
	}
	root, err = o.root(ctx, e, s)
	if err != nil {
		return sel, nil, "", err
	}
	switch {
	case o.changedFiles != "":
		sel.Source = "--changed-files " + o.changedFiles
		if changed, err = selection.ReadChanged(o.changedFiles, os.Stdin); err != nil {
			err = usagef("--changed-files: %w", err)
		}
	case o.changedSince != "":
		var base string
		if changed, base, err = selection.GitChanged(ctx, root, o.changedSince); err != nil {
			err = usagef("--changed-since %s: %w", o.changedSince, err)
		}
		sel.Source = fmt.Sprintf("--changed-since %s (merge base %.12s)", o.changedSince, base)
	}
	if err != nil {
		return sel, nil, "", err
	}
	sel.ChangedFiles = len(changed)
	return sel, changed, root, nil
}

// root is the repository root: --repo-root, else git's top level of the suite's folder, else
// (in a workflow step) the workspace when it holds the suite: in a container action git
// refuses the checkout, which another user owns ("dubious ownership"), and trusting it for
// every repository would turn off that protection.
func (o *selectOptions) root(ctx context.Context, e env, s *suite.Suite) (string, error) {
	if o.repoRoot != "" {
		abs, err := filepath.Abs(o.repoRoot)
		if err != nil {
			return "", usagef("--repo-root %s: %v", o.repoRoot, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return "", usagef("--repo-root %s: not a folder", o.repoRoot)
		}
		return abs, nil
	}
	top, err := selection.GitRoot(ctx, filepath.Dir(s.Path))
	if err == nil {
		return top, nil
	}
	if ws := e.github().Workspace; ws != "" {
		if rel, rerr := filepath.Rel(ws, s.Path); rerr == nil && filepath.IsLocal(rel) {
			fmt.Fprintf(e.stderr, "select: the repository root is $GITHUB_WORKSPACE %s (%v)\n", ws, err)
			return ws, nil
		}
	}
	return "", usagef("find the repository root of suite %s (pass --repo-root): %v", s.Path, err)
}
