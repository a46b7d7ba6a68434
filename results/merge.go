package results

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Input is one results file to merge: where it came from (for error messages) and what it
// holds.
type Input struct {
	File   string
	Result *Result
}

// Merge combines the results of any number of partitions (and files) into one Result per
// lane, sorted by lane name. A case belongs to its own lane, else to the lane its run was
// asked for, else to DefaultLane. Each merged Result holds its cases in the order of the
// partitions (by index, then by file), the run-level errors of every file (prefixed by the
// file). It judges nothing: a lane's status is the judge's (judge.LaneStatus), which its caller sets.
//
// The same case may appear in several inputs only with identical content (the same file
// given twice, or as a file and as its folder); two different results for one case of one
// lane, or partitions of one lane that tested different commits or suites, are an error that
// names both files. Cases of a plan that did not run (a partition whose results never arrived,
// a case missing from its partition) become run-level errors of the lane: see PlanProblems.
func Merge(inputs []Input) ([]Result, error) {
	in := slices.Clone(inputs)
	// Partition order, then file order: a merged lane reads in plan order.
	slices.SortStableFunc(in, func(a, b Input) int {
		return cmp.Compare(a.Result.Partition.Index, b.Result.Partition.Index)
	})
	m := merger{lanes: map[string]*mergedLane{}}
	for _, x := range in {
		for _, name := range lanesOf(x.Result) {
			m.addRun(m.lane(name, x), x)
		}
		m.addCases(x)
	}
	if len(m.errs) > 0 {
		return nil, fmt.Errorf("merge results:\n%s", strings.Join(m.errs, "\n"))
	}
	return m.results(PlanProblems(inputs)), nil
}

// merger is Merge under way: the lanes seen so far, and the conflicts found between inputs.
type merger struct {
	lanes map[string]*mergedLane
	errs  []string
}

// mergedLane is one lane of Merge under way.
type mergedLane struct {
	res   Result
	first string // the file that set res.Commit and res.Suite
	cases map[string]caseFrom
	order []caseFrom
	gpus  []string
	parts []int
}

// caseFrom is a case of a lane and the file it came from.
type caseFrom struct {
	file string
	c    CaseResult
}

// deselectedLane is the lane a case that r's selection left out belongs to.
func deselectedLane(r *Result, d Deselected) string {
	return cmp.Or(d.Lane, r.Lane, DefaultLane)
}

// lanesOf lists, each once, the lanes a run speaks for: those of its cases and of the cases
// its selection left out (a lane whose every case was left out still has a verdict: nothing
// to check), and its own lane when it checked nothing, unless its plan gave it nothing to
// check (the lane's other partitions speak for the lane).
func lanesOf(r *Result) []string {
	var names []string
	for _, c := range r.Cases {
		names = append(names, r.LaneOf(c))
	}
	if len(r.Cases) == 0 && !r.EmptyPartition() {
		names = append(names, cmp.Or(r.Lane, DefaultLane))
	}
	for _, d := range r.Deselected {
		names = append(names, deselectedLane(r, d))
	}
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// lane is the merged lane name, started from input x when it is the first to speak for it.
func (m *merger) lane(name string, x Input) *mergedLane {
	if l := m.lanes[name]; l != nil {
		return l
	}
	r := x.Result
	l := &mergedLane{first: x.File, cases: map[string]caseFrom{}}
	l.res = Result{
		Schema: Schema, Suite: r.Suite, Lane: name, Mode: r.Mode, Commit: r.Commit,
		PlanHash: r.PlanHash, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		Partition: Partition{Index: 0, Total: 1},
	}
	m.lanes[name] = l
	return l
}

// addRun merges what run x says about lane l as a whole: its commit and suite (which must be
// the lane's), GPU, partition and the machine it ran on, times, errors, selection and the
// cases it left out.
func (m *merger) addRun(l *mergedLane, x Input) {
	r, name := x.Result, l.res.Lane
	if r.Commit != "" && l.res.Commit != "" && r.Commit != l.res.Commit {
		m.errs = append(m.errs, fmt.Sprintf("lane %s: %s tested commit %s but %s tested %s", name, l.first, l.res.Commit, x.File, r.Commit))
	}
	if r.Suite != l.res.Suite {
		m.errs = append(m.errs, fmt.Sprintf("lane %s: %s ran suite %q but %s ran suite %q", name, l.first, l.res.Suite, x.File, r.Suite))
	}
	l.res.Commit = cmp.Or(l.res.Commit, r.Commit)
	if r.GPU != "" && !slices.Contains(l.gpus, r.GPU) {
		l.gpus = append(l.gpus, r.GPU)
	}
	if !slices.Contains(l.parts, r.Partition.Index) {
		l.parts = append(l.parts, r.Partition.Index)
		if r.Machine != nil {
			l.res.Machines = append(l.res.Machines, *r.Machine)
		}
	}
	l.res.StartedAt = earliest(l.res.StartedAt, r.StartedAt)
	if r.FinishedAt.After(l.res.FinishedAt) {
		l.res.FinishedAt = r.FinishedAt
	}
	for _, e := range r.Errors {
		l.res.Errors = append(l.res.Errors, x.File+": "+e)
	}
	l.res.Files = mergeFiles(l.res.Files, r.Files)
	if r.Selection != nil && l.res.Selection == nil {
		l.res.Selection = r.Selection
	}
	for _, d := range r.Deselected {
		if deselectedLane(r, d) == name && !slices.ContainsFunc(l.res.Deselected, func(o Deselected) bool { return o.Case == d.Case }) {
			d.Lane = name
			l.res.Deselected = append(l.res.Deselected, d)
		}
	}
}

// addCases adds the cases of run x to their lanes; a case already there must say the same.
func (m *merger) addCases(x Input) {
	r := x.Result
	for _, c := range r.Cases {
		l := m.lanes[r.LaneOf(c)]
		if prev, ok := l.cases[c.ID]; ok {
			if !sameCase(prev.c, c) {
				m.errs = append(m.errs, fmt.Sprintf("lane %s case %s: %s and %s hold different results for it", r.LaneOf(c), c.ID, prev.file, x.File))
			}
			continue
		}
		cf := caseFrom{file: x.File, c: c}
		l.cases[c.ID] = cf
		l.order = append(l.order, cf)
	}
}

// results finishes every lane, with the errors of the plans its partitions were cut from
// (planned, by plan hash), sorted by lane name; their statuses are left to the judge.
func (m *merger) results(planned map[string][]string) []Result {
	out := make([]Result, 0, len(m.lanes))
	for _, l := range m.lanes {
		l.res.Errors = append(l.res.Errors, planned[l.res.PlanHash]...)
		for _, cf := range l.order {
			c := cf.c
			c.Lane = l.res.Lane
			l.res.Cases = append(l.res.Cases, c)
		}
		l.res.GPU = strings.Join(l.gpus, ", ")
		slices.SortFunc(l.res.Machines, func(a, b Machine) int { return cmp.Compare(a.Partition, b.Partition) })
		l.res.Partition.Total = max(1, len(l.parts))
		out = append(out, l.res)
	}
	slices.SortFunc(out, func(a, b Result) int { return cmp.Compare(a.Lane, b.Lane) })
	return out
}

func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}

// sameCase reports whether two results of one case say the same thing, compared as they
// would be written to a results file.
func sameCase(a, b CaseResult) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// mergeFiles keeps the first partition's data files of a lane; partitions that ran on runners
// of other runner_overrides pools add their pool and runner to the lists, so that the report
// names every pool whose references a lane's verdicts used.
func mergeFiles(into, f *Files) *Files {
	if f == nil {
		return into
	}
	if into == nil {
		c := *f
		return &c
	}
	add := func(list, v string) string {
		if v == "" || slices.Contains(strings.Split(list, ", "), v) {
			return list
		}
		if list == "" {
			return v
		}
		return list + ", " + v
	}
	if f.InPool {
		into.Pool, into.InPool = add(into.Pool, f.Pool), true
	}
	into.Runner = add(into.Runner, f.Runner)
	for _, w := range f.Warnings {
		if !slices.Contains(into.Warnings, w) {
			into.Warnings = append(into.Warnings, w)
		}
	}
	return into
}
