package baselines

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// measured is the worst value of every metric of one case across the requests and
// partitions seen. NaN means not measured.
type measured struct {
	id         string
	stages     results.Stages // max per stage, in first-seen pipeline order
	steps      []float64      // max per step index
	stepCounts map[int]bool   // how many steps the requests reported
	e2e        float64
	avg        float64
	median     float64
	loadMs     float64
	wallS      float64
	mem        map[string]float64 // baseline key (load_peak_vram_mb, ...) → max MiB
	requests   int
	realtime   bool // e2e is realtime sessions' (addSession)
	// memoryOnly: no request had a perf record, but memory or the load was measured (a
	// server without performance.log): only those are written.
	memoryOnly bool
}

// measuredKeys are the scenario keys m has values for beside the timings: the load time and
// the memory peaks, sorted.
func (m *measured) measuredKeys() []string {
	keys := slices.Sorted(maps.Keys(m.mem))
	if !math.IsNaN(m.loadMs) {
		keys = append([]string{"expected_load_ms"}, keys...)
	}
	return keys
}

func newMeasured(id string) *measured {
	nan := math.NaN()
	return &measured{id: id, e2e: nan, avg: nan, median: nan, loadMs: nan, wallS: nan, mem: map[string]float64{}, stepCounts: map[int]bool{}}
}

// worst keeps the larger of a and b; NaN counts as "no value".
func worst(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	}
	return math.Max(a, b)
}

// addRequest folds in one request's timings and runtime memory. A request without a perf
// record (no server total, no stages) adds only its memory.
func (m *measured) addRequest(rr results.RequestResult) {
	m.addMemory("runtime", rr.PeakVRAMMiB)
	if len(rr.RealtimeChunks) > 0 {
		m.addSession(rr)
		return
	}
	if !hasPerf(rr) {
		return
	}
	m.requests++
	if rr.ServerTotalMs > 0 {
		m.e2e = worst(m.e2e, rr.ServerTotalMs)
	}
	for _, st := range rr.Stages {
		if i := slices.IndexFunc(m.stages, func(s results.Stage) bool { return s.Name == st.Name }); i >= 0 {
			m.stages[i].Ms = math.Max(m.stages[i].Ms, st.Ms)
		} else {
			m.stages = append(m.stages, st)
		}
	}
	if n := len(rr.StepsMs); n > 0 {
		m.stepCounts[n] = true
		for i, v := range rr.StepsMs {
			if i < len(m.steps) {
				m.steps[i] = math.Max(m.steps[i], v)
			} else {
				m.steps = append(m.steps, v)
			}
		}
		// The same mean and median as the checks (Python 3.12's sum, statistics.median), so
		// that a regenerated baseline is exactly what the request measured.
		m.avg = worst(m.avg, checks.StepMean(rr.StepsMs))
		med := checks.StepMedian(rr.StepsMs)
		m.median = worst(m.median, med)
	}
}

// addSession folds in a realtime request: its E2E is the session's (checks.SessionE2E: init
// sent → the last chunk's stats), which a realtime case's perf.e2e judges, from a session
// that delivered its output (hasPerf). Its last chunk's perf record gives the memory alone: a
// chunk's stages and steps are not the session's, and SGLang's realtime scenario has none
// (h100.json lingbot_world_realtime_plastic_beach: stages_ms {}, denoise_step_ms {}, 0.0
// averages).
func (m *measured) addSession(rr results.RequestResult) {
	if hasPerf(rr) {
		m.realtime = true
		m.requests++
		m.e2e = worst(m.e2e, checks.SessionE2E(rr.RealtimeChunks))
	}
}

// addMemory folds in the peaks of one phase (load or runtime) under the baseline's keys.
// VRAM is the server's reserved peak (what SGLang's *_vram_mb means) or, from a server that
// reports none, NVML's per-process peak; host memory is the server's or the sampler's.
func (m *measured) addMemory(phase string, peaks map[string]float64) {
	pick := func(keys ...string) float64 {
		for _, k := range keys {
			if v, ok := peaks[k]; ok && v > 0 {
				return v
			}
		}
		return math.NaN()
	}
	for key, v := range map[string]float64{
		phase + "_peak_vram_mb":      pick(checks.SourceServerReserved, checks.SourceNVMLProcess),
		phase + "_peak_allocated_mb": pick(checks.SourceServerAllocated),
		phase + "_peak_host_anon_mb": pick(checks.SourceServerHostAnon, checks.SourceHostAnon),
	} {
		if !math.IsNaN(v) {
			m.mem[key] = worst(valueOr(m.mem, key), v)
		}
	}
}

func valueOr(m map[string]float64, k string) float64 {
	if v, ok := m[k]; ok {
		return v
	}
	return math.NaN()
}

// addCase folds in a whole case: its server start (when it paid for one), wall time and
// every request.
func (m *measured) addCase(cr results.CaseResult) {
	if cr.Load != nil && !cr.Load.Reused {
		if cr.Load.DurationMs > 0 {
			m.loadMs = worst(m.loadMs, cr.Load.DurationMs)
		}
		m.addMemory("load", cr.Load.PeakVRAMMiB)
	}
	if cr.WallMs > 0 {
		m.wallS = worst(m.wallS, cr.WallMs/1000)
	}
	for _, rr := range cr.Requests {
		m.addRequest(rr)
	}
}

// Change is one metric a regeneration wrote: Old is NaN for a new metric, New is NaN for a
// stage the server no longer reports (removed).
type Change struct {
	Scenario string
	Metric   string
	Old, New float64
}

// Regenerated is the outcome of Regenerate.
type Regenerated struct {
	File    *File
	Changes []Change
	// Warnings are soft problems: cases without measurements (left as they were), requests
	// that disagree on the number of denoise steps.
	Warnings []string
}

// ms2 rounds a time or memory value as SGLang writes them (2 decimals), keeping a positive
// measurement positive: a 0.0 baseline can never be checked.
func ms2(v float64) float64 {
	r := math.Round(v*100) / 100
	if r == 0 && v > 0 {
		return 0.01
	}
	return r
}

// Regenerate writes the worst value of every metric of every case in results into a copy of
// base (nil: a new file with SGLang's default tolerances, docs/sglang-compat.md §4), keeping its tolerances,
// metadata, key order and the scenarios no result measured. Scenario ids are case ids.
//   - stages_ms: the stages measured, max each, in the file's order then pipeline order; a
//     stage no longer reported is removed;
//   - denoise_step_ms: max per step; every step, or only the sampled steps when the file
//     lists only those for the scenario;
//   - expected_e2e_ms (server total; a realtime request's session E2E), expected_avg/median_denoise_ms:
//     the max over requests; a realtime scenario gets SGLang's realtime shape (addSession);
//   - estimated_full_test_time_s: the longest case wall time, seconds, one decimal;
//   - load/runtime_peak_vram_mb: max; in the top-level map when the file keeps them there;
//   - expected_load_ms and the *_allocated_mb, *_host_anon_mb keys, which SGLang's baseline
//     dump does not write (_dump_baseline_for_testcase, test_server_common.py @
//     a7ec6b97f786): written when the scenario has the key already, or, for a new scenario,
//     when another scenario of the file has it or opts.AllFields asks for every measured key.
func Regenerate(base *File, runs []*results.Result, opts RegenerateOptions) (*Regenerated, error) {
	var doc *node
	if base != nil {
		// A deep copy through the writer: base stays as it was read.
		d, err := parseJSON(base.Path, base.Marshal())
		if err != nil {
			return nil, err
		}
		doc = d
	} else {
		gpu := ""
		for _, r := range runs {
			if r.GPU != "" {
				gpu = r.GPU
				break
			}
		}
		doc = skeleton(gpu)
	}
	byID, pooled := measuredOf(runs)
	out := &Regenerated{}
	scenarios := doc.get("scenarios")
	if scenarios == nil {
		scenarios = objectNode()
		doc.set("scenarios", scenarios)
	}
	fractions := stepFractionsOf(doc)
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		m := byID[id]
		if m.requests == 0 {
			if len(m.mem) == 0 && math.IsNaN(m.loadMs) {
				out.Warnings = append(out.Warnings, fmt.Sprintf("case %s: no request has a perf record, and no memory was measured; scenario left as it was", id))
				continue
			}
			// A server without performance.log (not SGLang's): its memory and load were
			// measured all the same, and are written; the timings are not.
			m.memoryOnly = true
			out.Warnings = append(out.Warnings, fmt.Sprintf("case %s: no request has a perf record: wrote %s; left out the timings "+
				"(expected_e2e_ms, expected_avg_denoise_ms, expected_median_denoise_ms, stages_ms, denoise_step_ms: "+
				"SGLang's empty values in a new scenario, the old values in an existing one)", id, strings.Join(m.measuredKeys(), ", ")))
		}
		if len(m.stepCounts) > 1 {
			out.Warnings = append(
				out.Warnings,
				fmt.Sprintf("case %s: requests report different numbers of denoise steps %v; steps kept per index", id, slices.Sorted(maps.Keys(m.stepCounts))),
			)
		}
		sc := scenarios.get(id)
		isNew := sc == nil
		if isNew {
			sc = objectNode()
			scenarios.set(id, sc)
		}
		out.Changes = append(out.Changes, writeScenario(doc, sc, m, isNew, fractions, opts.AllFields)...)
	}
	for _, pool := range slices.Sorted(maps.Keys(pooled)) {
		for _, id := range slices.Sorted(maps.Keys(pooled[pool])) {
			ch, warn := writePool(doc, scenarios, pool, pooled[pool][id])
			out.Changes = append(out.Changes, ch...)
			if warn != "" {
				out.Warnings = append(out.Warnings, warn)
			}
		}
	}
	data := doc.marshal()
	f, err := Parse(pathOr(base), data)
	if err != nil {
		return nil, fmt.Errorf("regenerated file does not read back: %w", err)
	}
	out.File = f
	return out, nil
}

func pathOr(f *File) string {
	if f == nil {
		return "regenerated baseline"
	}
	return f.Path
}

// skeleton is a new baseline file: the tolerance profiles and sampling of docs/sglang-compat.md §4.
func skeleton(gpu string) *node {
	doc := objectNode()
	meta := objectNode()
	meta.set("model", stringNode("Diffusion Server"))
	if gpu != "" {
		meta.set("hardware", stringNode(gpu))
	}
	meta.set("description", stringNode("Generated by diffusion-check baseline: the worst value of every metric across requests and partitions."))
	doc.set("metadata", meta)
	tol := objectNode()
	for _, p := range []struct {
		name string
		t    Tolerances
	}{
		{"long_term", Tolerances{E2E: 0.15, DenoiseStage: 0.1, NonDenoiseStage: 0.5, DenoiseStep: 0.25, DenoiseAgg: 0.15}},
		{"pr_test", Tolerances{E2E: 0.25, DenoiseStage: 0.25, NonDenoiseStage: 0.8, DenoiseStep: 0.3, DenoiseAgg: 0.2}},
	} {
		prof := objectNode()
		for _, t := range tolerances {
			if t.required {
				prof.set(t.key, numberNode(*t.field(&p.t)))
			}
		}
		tol.set(p.name, prof)
	}
	doc.set("tolerances", tol)
	ir := objectNode()
	ir.set("threshold", numberNode(defaultImprovementThreshold))
	doc.set("improvement_reporting", ir)
	fr := &node{kind: 'a'}
	for _, f := range []float64{0, 0.2, 0.4, 0.6, 0.8, 1} {
		fr.vals = append(fr.vals, numberNode(f))
	}
	s := objectNode()
	s.set("step_fractions", fr)
	doc.set("sampling", s)
	doc.set("scenarios", objectNode())
	return doc
}

func stepFractionsOf(doc *node) []float64 {
	var out []float64
	if s := doc.get("sampling"); s != nil {
		if fr := s.get("step_fractions"); fr != nil {
			for _, n := range fr.vals {
				if v, err := n.float(); err == nil {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

func oldValue(n *node) float64 {
	if n == nil || n.kind != 'n' {
		return math.NaN()
	}
	v, err := n.float()
	if err != nil {
		return math.NaN()
	}
	return v
}

// writeStages writes m's stages_ms into the scenario node sc, the file's order first, then
// stages it did not have, and returns what changed.
func writeStages(sc *node, m *measured) []Change {
	var ch []Change
	old := sc.get("stages_ms")
	st := objectNode()
	var order []string
	if old != nil {
		for _, k := range old.keys {
			if old.get(k).kind == 'z' || slices.ContainsFunc(m.stages, func(s results.Stage) bool { return s.Name == k }) {
				order = append(order, k)
			} else {
				ch = append(ch, Change{Scenario: m.id, Metric: "stages_ms." + k, Old: oldValue(old.get(k)), New: math.NaN()})
			}
		}
	}
	for _, s := range m.stages {
		if !slices.Contains(order, s.Name) {
			order = append(order, s.Name)
		}
	}
	for _, k := range order {
		v, measuredStage := m.stages.Get(k)
		var prev *node
		if old != nil {
			prev = old.get(k)
		}
		if !measuredStage || prev != nil && prev.kind == 'z' { // null: a metric that does not apply
			st.set(k, prev)
			continue
		}
		st.set(k, numberNode(ms2(v)))
		ch = append(ch, Change{Scenario: m.id, Metric: "stages_ms." + k, Old: oldValue(prev), New: ms2(v)})
	}
	sc.set("stages_ms", st)
	return ch
}

// RegenerateOptions configures Regenerate.
type RegenerateOptions struct {
	// AllFields writes every measured key into a new scenario, also those that SGLang's
	// files do not have (expected_load_ms, *_allocated_mb, *_host_anon_mb).
	AllFields bool
}

// extraKeys are the scenario keys diffusion-check can measure that SGLang's baseline dump
// does not write.
var extraKeys = []string{"load_peak_allocated_mb", "runtime_peak_allocated_mb", "load_peak_host_anon_mb", "runtime_peak_host_anon_mb"}

// fileHas reports whether some scenario of the document has key.
func fileHas(doc *node, key string) bool {
	sc := doc.get("scenarios")
	if sc == nil || sc.kind != 'o' {
		return false
	}
	for _, id := range sc.keys {
		if s := sc.get(id); s != nil && s.kind == 'o' && s.get(key) != nil {
			return true
		}
	}
	return false
}

// writeScenario writes m into the scenario node sc and returns what changed.
func writeScenario(doc, sc *node, m *measured, isNew bool, fractions []float64, allFields bool) []Change {
	// An extra key is written where the scenario has it, or into a new scenario where the
	// file uses it or every field was asked for.
	extra := map[string]bool{}
	for _, k := range extraKeys {
		extra[k] = sc.get(k) != nil || isNew && (allFields || fileHas(doc, k))
	}
	var ch []Change
	put := func(obj *node, key, metric string, v float64, sorted bool) {
		old := oldValue(obj.get(key))
		if sorted {
			obj.setSorted(key, numberNode(v))
		} else {
			obj.set(key, numberNode(v))
		}
		ch = append(ch, Change{Scenario: m.id, Metric: metric, Old: old, New: v})
	}
	if len(m.stages) > 0 {
		ch = append(ch, writeStages(sc, m)...)
	}
	// A realtime scenario has the keys SGLang's loader requires (ScenarioConfig.from_dict,
	// testcase_configs.py) as SGLang's own realtime scenario has them: no stages, no steps, 0.0
	// averages; the session's E2E goes into expected_e2e_ms as any case's E2E. A memory-only
	// one (no perf record) gets the same empty timings where it has none.
	required := func(key string, empty *node) {
		if (m.realtime || m.memoryOnly) && sc.get(key) == nil {
			sc.set(key, empty)
		}
	}
	required("stages_ms", objectNode())
	required("denoise_step_ms", objectNode())
	if len(m.steps) > 0 {
		ch = append(ch, writeSteps(sc, m, fractions)...)
	}
	for _, x := range []struct {
		key string
		v   float64
	}{{"expected_e2e_ms", m.e2e}, {"expected_avg_denoise_ms", m.avg}, {"expected_median_denoise_ms", m.median}} {
		if !math.IsNaN(x.v) {
			put(sc, x.key, x.key, ms2(x.v), false)
		} else {
			required(x.key, numberNode(0))
		}
	}
	if !math.IsNaN(m.wallS) {
		put(sc, "estimated_full_test_time_s", "estimated_full_test_time_s", math.Round(m.wallS*10)/10, false)
	}
	// SGLang's baseline script now writes the load time of every case it measured (PR #39206,
	// test_baseline_script_preserves_required_load_measurement): a check run fails without it.
	if !math.IsNaN(m.loadMs) {
		put(sc, "expected_load_ms", "expected_load_ms", ms2(m.loadMs), false)
	}
	for _, key := range []string{"load_peak_vram_mb", "runtime_peak_vram_mb"} {
		v, ok := m.mem[key]
		if !ok {
			continue
		}
		if top := doc.get(key); top != nil && top.kind == 'o' && sc.get(key) == nil {
			put(top, m.id, key+" (top-level map)", ms2(v), true)
		} else {
			put(sc, key, key, ms2(v), false)
		}
	}
	for _, key := range []string{"load_peak_allocated_mb", "runtime_peak_allocated_mb", "load_peak_host_anon_mb", "runtime_peak_host_anon_mb"} {
		if v, ok := m.mem[key]; ok && extra[key] {
			put(sc, key, key, ms2(v), false)
		}
	}
	return ch
}

// writeSteps writes m's denoise_step_ms into the scenario node sc: every step, or only the
// sampled ones when sc lists only those; it returns what changed.
func writeSteps(sc *node, m *measured, fractions []float64) []Change {
	var ch []Change
	old := sc.get("denoise_step_ms")
	idx := make([]int, len(m.steps))
	for i := range idx {
		idx[i] = i
	}
	if old != nil && sampledOnly(old, fractions) {
		idx = checks.SampleSteps(len(m.steps), fractions)
	}
	st := objectNode()
	for _, i := range idx {
		k := strconv.Itoa(i)
		v := ms2(m.steps[i])
		var prev *node
		if old != nil {
			prev = old.get(k)
		}
		st.set(k, numberNode(v))
		ch = append(ch, Change{Scenario: m.id, Metric: "denoise_step_ms." + k, Old: oldValue(prev), New: v})
	}
	sc.set("denoise_step_ms", st)
	return ch
}

// sampledOnly reports whether a scenario's denoise_step_ms lists exactly the sampled steps
// (as SGLang's RTX 5090 file does) rather than every step.
func sampledOnly(steps *node, fractions []float64) bool {
	maxIdx := -1
	var have []int
	for _, k := range steps.keys {
		i, err := strconv.Atoi(k)
		if err != nil {
			return false
		}
		have = append(have, i)
		maxIdx = max(maxIdx, i)
	}
	sort.Ints(have)
	want := checks.SampleSteps(maxIdx+1, fractions)
	return len(have) < maxIdx+1 && slices.Equal(have, want)
}

// Snippet is the measured values of one request in the baseline file's format, as the
// entry "id": {...} to paste under "scenarios", for a case the file does not have yet.
func Snippet(id string, rr results.RequestResult) string {
	m := newMeasured(id)
	m.addRequest(rr)
	sc := objectNode()
	writeScenario(objectNode(), sc, m, true, nil, false)
	var b bytes.Buffer
	writePyString(&b, id)
	b.WriteString(": ")
	sc.write(&b, 0)
	return b.String()
}

// WriteChanges prints the table of a regeneration: one row per metric written, old → new
// with the relative change ("new" for a metric the file did not have, "removed" for a stage
// the server no longer reports).
func WriteChanges(w io.Writer, changes []Change) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tMETRIC\tOLD\tNEW\tCHANGE")
	for _, c := range changes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Scenario, c.Metric, tableNum(c.Old), tableNum(c.New), relChange(c.Old, c.New))
	}
	return tw.Flush()
}

func tableNum(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func relChange(old, cur float64) string {
	switch {
	case math.IsNaN(old):
		return "new"
	case math.IsNaN(cur):
		return "removed"
	case old == cur:
		return "="
	case old == 0:
		return "from 0"
	}
	return fmt.Sprintf("%+.1f%%", (cur/old-1)*100)
}

// poolKeys are the keys a pool's entry gets from a regeneration on one of its runners, each
// from the worst request: the E2E reference always (SGLang's pools hold E2E references), the
// others where the entry has them already.
var poolKeys = []string{"expected_e2e_ms", "expected_avg_denoise_ms", "expected_median_denoise_ms", "expected_load_ms"}

// writePool writes what a runner of pool measured for case m into
// runner_overrides.<pool>.<case>, leaving the shared scenario as it is. A case the file has no
// scenario for is left out with a warning: a pool can only override a scenario that exists.
func writePool(doc, scenarios *node, pool string, m *measured) ([]Change, string) {
	if m.requests == 0 {
		return nil, fmt.Sprintf("case %s (runner pool %s): no request has a perf record; left as it was", m.id, pool)
	}
	if scenarios.get(m.id) == nil {
		return nil, fmt.Sprintf(
			"case %s was measured on a runner of pool %s, but the file has no scenario %s for the pool to override: run it on a default-pool runner first",
			m.id, pool, m.id)
	}
	ro := doc.get("runner_overrides")
	if ro == nil {
		ro = objectNode()
		doc.set("runner_overrides", ro)
	}
	pn := ro.get(pool)
	if pn == nil {
		pn = objectNode()
		ro.set(pool, pn)
	}
	sc := pn.get(m.id)
	if sc == nil {
		sc = objectNode()
		pn.set(m.id, sc)
	}
	values := map[string]float64{
		"expected_e2e_ms":            m.e2e,
		"expected_avg_denoise_ms":    m.avg,
		"expected_median_denoise_ms": m.median,
		"expected_load_ms":           m.loadMs,
	}
	var ch []Change
	for _, k := range poolKeys {
		v := values[k]
		if math.IsNaN(v) || k != "expected_e2e_ms" && sc.get(k) == nil {
			continue
		}
		old := oldValue(sc.get(k))
		sc.set(k, numberNode(ms2(v)))
		ch = append(ch, Change{Scenario: m.id, Metric: "runner_overrides." + pool + "." + k, Old: old, New: ms2(v)})
	}
	return ch, ""
}

// measuredOf gathers what results measured, per case: byID for the shared scenarios, pooled
// by runner_overrides pool and case for runners of a pool (their values are that pool's
// references, not the shared scenario's).
func measuredOf(runs []*results.Result) (byID map[string]*measured, pooled map[string]map[string]*measured) {
	byID, pooled = map[string]*measured{}, map[string]map[string]*measured{}
	for _, r := range runs {
		for _, cr := range r.Cases {
			into := byID
			if r.Files != nil && r.Files.InPool && !strings.Contains(r.Files.Pool, ", ") {
				if pooled[r.Files.Pool] == nil {
					pooled[r.Files.Pool] = map[string]*measured{}
				}
				into = pooled[r.Files.Pool]
			}
			m := into[cr.ID]
			if m == nil {
				m = newMeasured(cr.ID)
				into[cr.ID] = m
			}
			m.addCase(cr)
		}
	}
	return byID, pooled
}
