package history

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// storeSchema tags every store file.
const storeSchema = "diffusion-check/history/v1"

// Kind is the kind of a run: a run on the default branch is part of the trend line (and of
// the evidence for tightening); a pull request's run is a point beside it, never evidence.
type Kind string

// The kinds of run.
const (
	KindDefault Kind = "default"
	KindPR      Kind = "pr"
)

// Run is what one report (one suite, lane and GPU class, every partition merged) adds to the
// store.
type Run struct {
	Schema string `json:"schema"`
	Suite  string `json:"suite"`
	Lane   string `json:"lane,omitempty"`
	GPU    string `json:"gpu,omitempty"`
	// Runner is the machine that ran it (the workflow's runner name or label): --runner, or
	// the runner name every partition recorded when they agree.
	Runner string `json:"runner,omitempty"`
	// Machines are the machines the partitions recorded (results.json's machine), by
	// partition; files written before they were recorded have none.
	Machines []results.Machine `json:"machines,omitempty"`
	Commit   string            `json:"commit"`
	// Kind is KindDefault or KindPR; PR is the pull request's number for KindPR.
	Kind Kind `json:"kind"`
	PR   int  `json:"pr,omitempty"`
	// RunID identifies the workflow run and attempt ("1234567-1"): two runs of one commit
	// get two files.
	RunID  string         `json:"run_id"`
	Date   time.Time      `json:"date"`
	Status results.Status `json:"status"`
	Cases  []Case         `json:"cases"`
}

// Case is one case's metrics in one run.
type Case struct {
	ID string `json:"id"`
	// Runner is the runner name of the partition that ran the case, when it recorded one
	// (RunnerOf falls back to the run's).
	Runner  string   `json:"runner,omitempty"`
	Metrics []Metric `json:"metrics"`
}

// RunnerOf is the runner that ran case c of run r: the case's own, else the run's.
func (r *Run) RunnerOf(c *Case) string { return cmp.Or(c.Runner, r.Runner) }

// Metric is one perf or memory metric of a case in one run: the worst value over the case's
// requests (the value a regenerated baseline would take), with the baseline and limit the
// run checked it against. Name is the check name, with the memory source after a slash
// (baselines.SpreadKey: "perf.e2e", "perf.stage.DenoisingStage", "memory.runtime_peak/server_reserved").
type Metric struct {
	Name   string  `json:"name"`
	Unit   string  `json:"unit,omitempty"`
	Value  float64 `json:"value"`
	Median float64 `json:"median"`
	// N is how many requests measured it.
	N        int      `json:"n"`
	Baseline *float64 `json:"baseline,omitempty"`
	Limit    *float64 `json:"limit,omitempty"`
}

// Meta is what a run's results do not say about it: where and why it ran.
type Meta struct {
	Commit string
	Kind   Kind
	PR     int
	RunID  string
	Runner string
	Date   time.Time
}

// FromResults makes the store entry of one report from its results (every partition of one
// lane; results.Read reads them). A case's metrics are its perf and memory checks that
// carry a value, per-step checks left out (there are dozens per case; their mean and median
// are kept), and perf.record (the server total again, which perf.e2e holds). The baseline and limit are those of the lowest-numbered request that has one:
// memory growth rewrites the limit of a later request to the previous request's peak, which
// is not the baseline.
func FromResults(runs []*results.Result, m Meta) (*Run, error) {
	if len(runs) == 0 {
		return nil, errors.New("no results")
	}
	first := runs[0]
	run := &Run{Schema: storeSchema, Suite: first.Suite, Lane: first.Lane, GPU: first.GPU, Runner: m.Runner,
		Commit: cmp.Or(m.Commit, first.Commit), Kind: m.Kind, PR: m.PR, RunID: m.RunID, Date: m.Date.UTC()}
	if run.Date.IsZero() {
		run.Date = first.FinishedAt.UTC()
	}
	var statuses []results.Status
	names := map[string]bool{}
	for _, r := range runs {
		if r.Suite != run.Suite || r.Lane != run.Lane || r.GPU != run.GPU {
			return nil, fmt.Errorf("results of suite %q lane %q gpu %q and of suite %q lane %q gpu %q: one history entry is one suite, lane and GPU class",
				run.Suite, run.Lane, run.GPU, r.Suite, r.Lane, r.GPU)
		}
		statuses = append(statuses, r.Status)
		var name string
		if r.Machine != nil {
			run.Machines = append(run.Machines, *r.Machine)
			name = r.Machine.RunnerName
		}
		names[name] = true
		for _, cr := range r.Cases {
			c := caseOf(cr)
			c.Runner = name
			run.Cases = append(run.Cases, c)
		}
	}
	if len(names) == 1 && run.Runner == "" {
		for n := range names {
			run.Runner = n
		}
	}
	slices.SortFunc(run.Machines, func(a, b results.Machine) int { return cmp.Compare(a.Partition, b.Partition) })
	run.Status = worstStatus(statuses)
	slices.SortFunc(run.Cases, func(a, b Case) int { return strings.Compare(a.ID, b.ID) })
	if err := run.Validate(); err != nil {
		return nil, err
	}
	return run, nil
}

// worstStatus is the run's status over partitions, by the order of checks' verdict rules.
func worstStatus(ss []results.Status) results.Status {
	for _, s := range []results.Status{results.Fail, results.Error, results.Cancelled, results.Flaky, results.Known} {
		if slices.Contains(ss, s) {
			return s
		}
	}
	return results.Pass
}

type gathered struct {
	unit           string
	higherBetter   bool
	values         []float64
	baseline, lim  *float64
	baselineFromIx int
}

func caseOf(cr results.CaseResult) Case {
	by := map[string]*gathered{}
	var order []string
	add := func(c results.Check, index int) {
		k := checks.KindOf(c.Name)
		// perf.record carries the same server total as perf.e2e, without a limit.
		if k.Group != checks.GroupPerf && k.Group != checks.GroupMemory || strings.HasPrefix(c.Name, checks.PerfStepPrefix) || c.Name == results.PerfRecord {
			return
		}
		if c.Value == nil || !(*c.Value > 0) || math.IsInf(*c.Value, 0) {
			return
		}
		name := baselines.SpreadKey(c.Name, c.Source)
		g := by[name]
		if g == nil {
			g = &gathered{unit: c.Unit, higherBetter: k.Direction == checks.HigherIsBetter}
			by[name] = g
			order = append(order, name)
		}
		g.values = append(g.values, *c.Value)
		if c.Baseline != nil && c.Limit != nil && (g.baseline == nil || index < g.baselineFromIx) {
			g.baseline, g.lim, g.baselineFromIx = c.Baseline, c.Limit, index
		}
	}
	for _, c := range cr.Checks {
		add(c, 0)
	}
	for _, rr := range cr.Requests {
		for _, c := range rr.Checks {
			add(c, rr.Index)
		}
	}
	out := Case{ID: cr.ID, Metrics: []Metric{}}
	for _, name := range order {
		g := by[name]
		s, _ := checks.SpreadOf(g.values)
		worst := s.Max
		if g.higherBetter {
			worst = s.Min
		}
		out.Metrics = append(out.Metrics, Metric{Name: name, Unit: g.unit, Value: worst, Median: s.Median, N: s.N, Baseline: g.baseline, Limit: g.lim})
	}
	return out
}

// Limits on what a store file may hold: a file from a pull request's run is untrusted input.
const (
	maxFileBytes = 1 << 20
	// maxValue bounds every number of a store file: 1e15 ms is 31,700 years, and a chart
	// scaled to 1e308 (or to a value that a unit change makes infinite) draws nothing.
	maxValue       = 1e15
	maxCases       = 1000
	maxMetrics     = 200
	maxStringBytes = 200
	// maxMachines bounds a run's machines: a lane has at most 256 partitions (plan).
	maxMachines = 256
)

// Validate returns every problem of a store entry at once; a store file that has one is
// not read.
func (r *Run) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if r.Schema != storeSchema {
		bad("schema %q, want %q", r.Schema, storeSchema)
	}
	for _, s := range []struct{ name, v string }{
		{"suite", r.Suite}, {"lane", r.Lane}, {"gpu", r.GPU}, {"runner", r.Runner}, {"commit", r.Commit}, {"run_id", r.RunID},
	} {
		if len(s.v) > maxStringBytes {
			bad("%s: longer than %d bytes", s.name, maxStringBytes)
		}
	}
	if r.Suite == "" {
		bad("suite: empty")
	}
	if r.Commit == "" {
		bad("commit: empty")
	}
	if r.RunID == "" {
		bad("run_id: empty")
	}
	switch {
	case r.Kind == KindDefault && r.PR != 0:
		bad("pr: %d on a default-branch run", r.PR)
	case r.Kind == KindPR && r.PR < 1:
		bad("pr: want the pull request's number ≥ 1 on a pull request's run, got %d", r.PR)
	case r.Kind != KindDefault && r.Kind != KindPR:
		bad("kind: %q, want %q or %q", r.Kind, KindDefault, KindPR)
	}
	if r.Date.IsZero() {
		bad("date: missing")
	}
	if len(r.Machines) > maxMachines {
		bad("machines: %d, at most %d", len(r.Machines), maxMachines)
	}
	for i, m := range r.Machines {
		fields := []string{m.RunnerName, m.RunnerOS, m.RunnerArch, m.RunnerEnvironment, m.Hostname, m.CPU, m.Driver, m.CUDA, m.NVMLNote}
		fields = append(fields, m.RunnerLabels...)
		for _, g := range m.GPUs {
			fields = append(fields, g.Name, g.UUID)
		}
		if len(m.RunnerLabels) > 64 || len(m.GPUs) > 64 {
			bad("machines[%d]: at most 64 labels and 64 GPUs", i)
		}
		for _, f := range fields {
			if len(f) > maxStringBytes {
				bad("machines[%d]: a field longer than %d bytes", i, maxStringBytes)
				break
			}
		}
	}
	if len(r.Cases) > maxCases {
		bad("cases: %d, at most %d", len(r.Cases), maxCases)
	}
	seen := map[string]bool{}
	for i, c := range r.Cases {
		if seen[c.ID] {
			bad("cases[%d].id: %q twice", i, c.ID)
		}
		seen[c.ID] = true
		c.validate(fmt.Sprintf("cases[%d]", i), bad)
	}
	return errors.Join(errs...)
}

// validate reports the problems of one case through bad; at names it ("cases[3]").
func (c *Case) validate(at string, bad func(format string, args ...any)) {
	if c.ID == "" || len(c.ID) > maxStringBytes {
		bad("%s.id: want 1 to %d bytes", at, maxStringBytes)
	}
	if len(c.Runner) > maxStringBytes {
		bad("%s.runner: longer than %d bytes", at, maxStringBytes)
	}
	if len(c.Metrics) > maxMetrics {
		bad("%s (%s): %d metrics, at most %d", at, c.ID, len(c.Metrics), maxMetrics)
	}
	names := map[string]bool{}
	for j, m := range c.Metrics {
		at := fmt.Sprintf("%s (%s) metrics[%d]", at, c.ID, j)
		if m.Name == "" || len(m.Name) > maxStringBytes || len(m.Unit) > maxStringBytes {
			bad("%s: name and unit: want at most %d bytes, name not empty", at, maxStringBytes)
		}
		if names[m.Name] {
			bad("%s: %q twice", at, m.Name)
		}
		names[m.Name] = true
		for _, v := range []*float64{&m.Value, &m.Median, m.Baseline, m.Limit} {
			if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0 || *v > maxValue) {
				bad("%s (%s): want finite numbers from 0 to %g, got %g", at, m.Name, maxValue, *v)
			}
		}
		if m.N < 1 {
			bad("%s (%s): n: want ≥ 1, got %d", at, m.Name, m.N)
		}
	}
}

// Series names the runs whose values are comparable: one suite, lane and GPU class.
type Series struct{ Suite, Lane, GPU string }

// SeriesOf is the series a run belongs to.
func (r *Run) SeriesOf() Series { return Series{r.Suite, r.Lane, r.GPU} }

func (s Series) String() string {
	return fmt.Sprintf("suite %s, lane %s, GPU %s", s.Suite, cmp.Or(s.Lane, results.DefaultLane), cmp.Or(s.GPU, "unknown"))
}

// metricTitle is what a reader calls a metric: its check's title, and the memory source.
func metricTitle(metric string) string {
	name, src, _ := strings.Cut(metric, "/")
	t := checks.KindOf(name).Title(name)
	if src != "" {
		t += " (" + src + ")"
	}
	return t
}

// Metric returns the metric name of case id, and whether the run has it.
func (r *Run) Metric(id, name string) (Metric, bool) {
	for _, c := range r.Cases {
		if c.ID != id {
			continue
		}
		for _, m := range c.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return Metric{}, false
}
