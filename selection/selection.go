package selection

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// Input is what a selection is made from.
type Input struct {
	Suite *suite.Suite
	// Lane restricts the selection to the cases of one lane; empty means every lane.
	Lane string
	// Root is the repository root, absolute. The globs of `paths:` and the changed paths are
	// relative to it; the suite's own files (the suite, baselines, thresholds, ground truth,
	// known failures, input files) are made relative to it to be compared with the changes.
	Root string
	// Changed are the changed paths: repository-relative, slash-separated, as git and
	// GitHub's API write them.
	Changed []string
	// Graphs, when set, keeps the import graphs this selection reads for the next one over
	// the same checkout (a benchmark over many change lists); nil reads them afresh.
	Graphs *Graphs
}

// Pick is a selected case and the first reason found for it.
type Pick struct {
	Case   string `json:"case"`
	Lane   string `json:"lane,omitempty"`
	Reason string `json:"reason"`
}

// Outcome is a selection: every case of the lane is in exactly one of the two lists, each in
// suite order.
type Outcome struct {
	Selected   []Pick
	Deselected []results.Deselected
}

// IDs are the ids of the selected cases.
func (o *Outcome) IDs() []string {
	ids := make([]string, 0, len(o.Selected))
	for _, p := range o.Selected {
		ids = append(ids, p.Case)
	}
	return ids
}

// Select decides, for every case of the lane, whether the changed paths can affect it. A
// case is selected when
//   - the suite file changed (every case), or the known-failures file changed (every case:
//     an entry taken out must be proven by running its case, and the old file is not here);
//   - it has no `paths:`, of its own or its server's (it always runs);
//   - one of its input files (input_reference, images) or ground-truth files changed;
//   - a perf baseline file that has an entry for it changed;
//   - a consistency-thresholds file changed that has an entry for it, or that sets defaults
//     it takes (it has no entry of its own in that file);
//   - a changed path matches its globs: its server's `paths:`, then its own, with
//     gitignore's rule that the last glob matching a path decides ("!glob" takes it out).
//
// A changed baseline or thresholds file that cannot be read is an error: the run would fail
// on it too. One that was deleted selects every case.
func Select(in Input) (*Outcome, error) {
	s := in.Suite
	cases := s.CasesFor(in.Lane)
	if len(cases) == 0 {
		return nil, fmt.Errorf("suite %s: no cases in lane %q", s.Path, in.Lane)
	}
	p := &picks{cases: cases, why: map[string]string{}}
	r := resolver{root: in.Root}
	suiteFile := r.rel(s.Path)
	known := r.rel(s.KnownFailures)
	var errs []error
	for _, path := range in.Changed {
		switch path {
		case suiteFile:
			p.all("the suite file " + path + " changed")
		case known:
			p.all("the known-failures file " + path + " changed")
		}
		if r.inData(s.Baselines, path) {
			errs = append(errs, p.baselineChanged(r, path))
		}
		if r.inData(s.Thresholds, path) {
			errs = append(errs, p.thresholdsChanged(in.Root, path))
		}
		for _, c := range cases {
			if reason := r.caseFile(s, c, path); reason != "" {
				p.pick(c.ID, reason)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p.outcome(in, r), nil
}

// picks are the cases of a lane and the first reason each was selected for, as Select finds
// them.
type picks struct {
	cases []*suite.Case
	why   map[string]string // case id → first reason it is selected
}

// pick selects a case for reason, unless it was selected already.
func (p *picks) pick(id, reason string) {
	if _, ok := p.why[id]; !ok {
		p.why[id] = reason
	}
}

// all selects every case for reason.
func (p *picks) all(reason string) {
	for _, c := range p.cases {
		p.pick(c.ID, reason)
	}
}

// baselineChanged selects the cases that the changed perf baseline file (or its spread
// sidecar) at path has an entry for; every case when it was deleted.
func (p *picks) baselineChanged(r resolver, path string) error {
	// A baseline's spread sidecar (<gpu>.spread.json, beside <gpu>.json) holds the same
	// scenarios as the baseline itself: the cases of that file are the ones whose report it
	// changes.
	file, what := path, "the perf baseline file "+path
	if base, ok := strings.CutSuffix(path, baselines.SpreadSuffix); ok {
		file, what = base+".json", "the spread file "+path+" of the perf baseline file "+base+".json"
	}
	ids, err := r.baselineIDs(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.all(what + " was deleted")
	case err != nil:
		return err
	default:
		for _, c := range p.cases {
			if ids[c.ID] {
				p.pick(c.ID, what+" has an entry for it and changed")
			}
		}
	}
	return nil
}

// thresholdsChanged selects the cases that the changed consistency-thresholds file at path
// has an entry for, or whose defaults it sets; every case when it was deleted.
func (p *picks) thresholdsChanged(root, path string) error {
	t, err := baselines.LoadThresholds(filepath.Join(root, filepath.FromSlash(path)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.all("the consistency thresholds file " + path + " was deleted")
	case err != nil:
		return err
	default:
		for _, c := range p.cases {
			if _, own := t.Cases[c.ID]; own {
				p.pick(c.ID, "the consistency thresholds file "+path+" has an entry for it and changed")
			} else if len(t.Defaults) > 0 {
				p.pick(c.ID, "the consistency thresholds file "+path+" changed, and it takes that file's defaults")
			}
		}
	}
	return nil
}

// outcome decides every case: selected with its first reason (a data file, the import
// graph of its server, its globs), or left out saying why.
func (p *picks) outcome(in Input, r resolver) *Outcome {
	s := in.Suite
	out := &Outcome{}
	graphs := in.Graphs
	if graphs == nil {
		graphs = NewGraphs()
	}
	for _, c := range p.cases {
		srv := s.Servers[c.Server]
		globs := append(slices.Clone(srv.Paths), c.Paths...)
		ig, changed, reason := graphs.decide(r, srv, in.Changed, len(globs) > 0)
		if reason != "" {
			p.pick(c.ID, reason)
		}
		reason, ok := p.why[c.ID]
		m := match(globs, changed)
		if !ok && m.path != "" {
			reason, ok = fmt.Sprintf("%s matches paths: %s", m.path, m.glob), true
		}
		if ok {
			out.Selected = append(out.Selected, Pick{Case: c.ID, Lane: c.Lane, Reason: reason})
			continue
		}
		miss := m.miss(globs)
		if ig != nil {
			miss = ig.miss(globs, m)
		}
		out.Deselected = append(out.Deselected, results.Deselected{Case: c.ID, Lane: c.Lane, Reason: miss})
	}
	return out
}

// matched is the outcome of matching changed paths against a case's globs.
type matched struct {
	path, glob string // the first changed path the globs select, and the glob that did
	// excluded and by name a changed path that a positive glob matched and a later "!glob"
	// took out: the likeliest surprise in a deselection, so its reason names it.
	excluded, by string
}

// match applies globs to every changed path with gitignore's rule: the last glob that
// matches a path decides, and a "!glob" deselects. Patterns were validated when the suite
// was read.
func match(globs, changed []string) matched {
	var m matched
	for _, p := range changed {
		in, glob, neg := false, "", ""
		for _, g := range globs {
			pat, not := strings.CutPrefix(g, "!")
			if ok, _ := doublestar.Match(pat, p); !ok {
				continue
			}
			if not {
				in, neg = false, g
			} else {
				in, glob = true, g
			}
		}
		switch {
		case in:
			m.path, m.glob = p, glob
			return m
		case glob != "" && m.excluded == "":
			m.excluded, m.by = p, neg
		}
	}
	return m
}

// miss is the reason a case with globs was left out.
func (m matched) miss(globs []string) string {
	const show = 3
	var pos []string
	for _, g := range globs {
		if !strings.HasPrefix(g, "!") {
			pos = append(pos, g)
		}
	}
	list := strings.Join(pos[:min(len(pos), show)], ", ")
	if len(pos) > show {
		list += fmt.Sprintf(" and %d more", len(pos)-show)
	}
	s := "no changed path matches paths: " + list
	if m.excluded != "" {
		s += fmt.Sprintf(" (%s is taken out by %s)", m.excluded, m.by)
	}
	return s
}

// resolver makes the suite's absolute paths repository-relative.
type resolver struct{ root string }

// rel is abs relative to the repository root, slash-separated; "" when abs is empty or lies
// outside the repository (no changed path can name it then). Symbolic links are resolved
// on both sides as far as they exist, so that a suite read through a link still compares
// equal with git's paths.
func (r resolver) rel(abs string) string {
	if abs == "" {
		return ""
	}
	root := resolve(r.root)
	rel, err := filepath.Rel(root, resolve(abs))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	return filepath.ToSlash(rel)
}

// resolve evaluates the symbolic links of p's longest existing prefix: a deleted file's
// folder still exists.
func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir, base := filepath.Split(p)
	if dir == p || dir == "" {
		return p
	}
	return filepath.Join(resolve(filepath.Clean(dir)), base)
}

// inData reports whether changed path p is a JSON data file of setting (a file, or a folder
// of <gpu>.json files), as the suite's baselines and thresholds are.
func (r resolver) inData(setting, p string) bool {
	d := r.rel(setting)
	if d == "" {
		return false
	}
	return p == d || path.Dir(p) == d && strings.HasSuffix(p, ".json")
}

// baselineIDs are the scenario ids of the perf baseline file at repository path p.
func (r resolver) baselineIDs(p string) (map[string]bool, error) {
	f, err := baselines.Load(filepath.Join(r.root, filepath.FromSlash(p)))
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for id := range f.Scenarios {
		ids[id] = true
	}
	return ids, nil
}

// caseFile is why changed path p selects case c when it is one of the case's own files, its
// inputs or its ground truth; "" otherwise.
func (r resolver) caseFile(s *suite.Suite, c *suite.Case, p string) string {
	for _, in := range append([]string{c.Request.InputReference}, c.Request.Images...) {
		if in != "" && r.rel(in) == p {
			return "its input file " + p + " changed"
		}
	}
	if gt := r.rel(s.GroundTruth); gt != "" && path.Dir(p) == gt && groundTruthOf(path.Base(p), c) {
		return "its ground truth " + p + " changed"
	}
	return ""
}

// groundTruthOf reports whether name is one of the ground-truth files of c, as package
// baselines names them: {id}_{n}gpu.{ext} or {id}_{n}gpu_frame_{0,mid,last}.png. The rest
// after the stem is checked, so that case "a" does not claim the files of case "a_1gpu_b".
func groundTruthOf(name string, c *suite.Case) bool {
	rest, ok := strings.CutPrefix(name, baselines.Stem(c.ID, c.NumGPUs))
	if !ok {
		return false
	}
	if strings.HasPrefix(rest, "_frame_") {
		frames := baselines.KeyFrameNames(c.ID, c.NumGPUs)
		return slices.Contains(frames[:], name)
	}
	return strings.HasPrefix(rest, ".") && !strings.Contains(rest[1:], ".")
}

// ValidPath reports what is wrong with a changed path as a caller reads it from an
// untrusted list (a pull request names its files): "" when it is a plain repository path.
func ValidPath(p string) string {
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return fmt.Sprintf("control character %U in %q", r, p)
		}
	}
	switch {
	case strings.HasPrefix(p, "/"):
		return fmt.Sprintf("%q is absolute; want a path relative to the repository root", p)
	case slices.Contains(strings.Split(p, "/"), ".."), slices.Contains(strings.Split(p, "/"), "."):
		return fmt.Sprintf("%q has a \".\" or \"..\" part; want a plain repository path", p)
	case strings.Contains(p, "//"), strings.HasSuffix(p, "/"):
		return fmt.Sprintf("%q has an empty part; want a plain repository path", p)
	}
	return ""
}
