package history

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/results"
)

// PoolRule is when a pool of runners gets its own E2E reference (docs/history.md, "Runner
// pools").
type PoolRule struct {
	// Prefixes name the pools: a runner belongs to the longest prefix its name begins with
	// (SGLang's runner_overrides rule); a runner that none begins is a pool of its own name.
	Prefixes []string
	// MinRuns is how many default-branch runs a pool needs before it is calibrated; a pool
	// with fewer is named as too new. The rest of the runs need as many.
	MinRuns int
	// Alpha bounds the one-sided p-value of the Mann-Whitney rank test: the pool's runs are
	// slower than the rest's with probability under Alpha if they were not.
	Alpha float64
	// MinRatio is the smallest slowdown worth an override: the pool's median over the rest's.
	MinRatio float64
}

// DefaultPoolRule is 5 runs a pool, p < 0.01, 10% slower.
var DefaultPoolRule = PoolRule{MinRuns: 5, Alpha: 0.01, MinRatio: 1.10}

// poolMetric is the metric pools are calibrated on: SGLang's runner_overrides carry
// expected_e2e_ms.
const poolMetric = checks.PerfE2E

// PoolRun is one run behind a pool's value: its runner and the case's E2E in it.
type PoolRun struct {
	Run    *Run
	Runner string
	// Median is the median over the run's requests (the observation the pool's minimum is
	// taken over), Worst their maximum; Passes says whether Worst is within the override's
	// limit.
	Median, Worst float64
	Passes        bool
}

// PoolOverride is one runner_overrides entry: the pool's reference E2E of one case, the
// minimum observed (SGLang's rule: the minimum, not the noisy maximum), the tolerance
// unchanged.
type PoolOverride struct {
	Prefix, Case string
	// Shared is the scenario's expected_e2e_ms, which stays as it is; Value the pool's.
	Shared, Value float64
	// Tolerance is the E2E tolerance the runs were checked with; Limit is the pool's limit
	// with it (checks.PerfLimit, SGLang's pad included).
	Tolerance, Limit float64
	// PoolMedian and RestMedian are the medians of the runs' medians; P the one-sided
	// p-value of the rank test, U its statistic.
	PoolMedian, RestMedian, P, U float64
	Runs                         []PoolRun
	RestRuns                     int
}

// TooNew is a pool with too few runs to calibrate.
type TooNew struct {
	Prefix  string
	Runners []string
	Runs    int
}

// PoolOutcome is what Pools found for one series.
type PoolOutcome struct {
	Overrides []PoolOverride
	TooNew    []TooNew
	// Unnamed counts runs whose cases name no runner (results from before machines were
	// recorded, without --runner): they are in no pool.
	Unnamed int
	// Checked says, per pool and case looked at without an override, why.
	Checked []string
}

// poolOf is the pool of a runner name under prefixes: the longest one it begins with, else
// the name itself.
func poolOf(runner string, prefixes []string) string {
	best := ""
	for _, p := range prefixes {
		if p != "" && strings.HasPrefix(runner, p) && len(p) > len(best) {
			best = p
		}
	}
	return cmp.Or(best, runner)
}

// Pools groups the default-branch runs of series s by runner pool, per case, and proposes a
// runner_overrides entry for each pool whose E2E is slower than the other pools' beyond
// noise: the one-sided Mann-Whitney rank test of the runs' medians (p < Alpha) and a
// slowdown of at least MinRatio. A faster pool gets none (that would tighten the pool; the
// shared value is `history tighten`'s), and neither does a pool whose minimum is not above
// the shared value; the shared scenario is never changed. current gives the shared value.
func Pools(runs []*Run, s Series, rule PoolRule, current Current) PoolOutcome {
	byCase, runners, unnamed := poolObservations(runs, s, rule.Prefixes)
	out := PoolOutcome{Unnamed: unnamed}
	tooNew := map[string]int{}
	for _, id := range slices.Sorted(maps.Keys(byCase)) {
		pools := byCase[id]
		shared, ok := current(id, poolMetric)
		if !ok {
			continue
		}
		for _, pool := range slices.Sorted(maps.Keys(pools)) {
			if len(pools[pool]) < rule.MinRuns {
				tooNew[pool] = max(tooNew[pool], len(pools[pool]))
				continue
			}
			o, checked := comparePool(id, pool, pools, shared, rule)
			if o == nil {
				out.Checked = append(out.Checked, checked)
				continue
			}
			out.Overrides = append(out.Overrides, *o)
		}
	}
	for _, pool := range slices.Sorted(maps.Keys(tooNew)) {
		if slices.ContainsFunc(out.Overrides, func(o PoolOverride) bool { return o.Prefix == pool }) {
			continue
		}
		out.TooNew = append(out.TooNew, TooNew{Prefix: pool, Runners: slices.Sorted(maps.Keys(runners[pool])), Runs: tooNew[pool]})
	}
	return out
}

// poolObs is one run's E2E metric of a case, on a runner of a pool.
type poolObs struct {
	run    *Run
	runner string
	m      Metric
}

// poolObservations sorts the default-branch runs of series s by case and pool (byCase: case →
// pool → runs, in the order of runs), with the runner names of each pool; unnamed counts the
// runs with a case measured on a runner with no name.
func poolObservations(runs []*Run, s Series, prefixes []string) (byCase map[string]map[string][]poolObs, runners map[string]map[string]bool, unnamed int) {
	byCase = map[string]map[string][]poolObs{}
	runners = map[string]map[string]bool{}
	for _, r := range runs {
		if r.Kind != KindDefault || r.SeriesOf() != s {
			continue
		}
		hasUnnamed := false
		for i := range r.Cases {
			c := &r.Cases[i]
			m, ok := r.Metric(c.ID, poolMetric)
			if !ok {
				continue
			}
			name := r.RunnerOf(c)
			if name == "" {
				hasUnnamed = true
				continue
			}
			pool := poolOf(name, prefixes)
			if byCase[c.ID] == nil {
				byCase[c.ID] = map[string][]poolObs{}
			}
			byCase[c.ID][pool] = append(byCase[c.ID][pool], poolObs{r, name, m})
			if runners[pool] == nil {
				runners[pool] = map[string]bool{}
			}
			runners[pool][name] = true
		}
		if hasUnnamed {
			unnamed++
		}
	}
	return byCase, runners, unnamed
}

// comparePool compares pool's runs of case id (at least rule.MinRuns) with the other pools'
// under rule: the override it needs, or nil and the line that says why it needs none.
func comparePool(id, pool string, pools map[string][]poolObs, shared float64, rule PoolRule) (*PoolOverride, string) {
	mine := pools[pool]
	var rest []float64
	for other, os := range pools {
		if other != pool {
			for _, o := range os {
				rest = append(rest, o.m.Median)
			}
		}
	}
	if len(rest) < rule.MinRuns {
		return nil, fmt.Sprintf("%s %s: %d runs of other pools to compare with, %d needed", pool, id, len(rest), rule.MinRuns)
	}
	xs := make([]float64, len(mine))
	for i, o := range mine {
		xs[i] = o.m.Median
	}
	u, p := mannWhitneyGreater(xs, rest)
	pm, rm := median(xs), median(rest)
	ratio := pm / rm
	lowest := math.Round(slices.Min(xs)*100) / 100 // as SGLang's files hold it
	switch {
	case p >= rule.Alpha || ratio < rule.MinRatio:
		return nil, fmt.Sprintf("%s %s: not slower than the other pools beyond noise (median %s vs %s, ×%.2f; p = %.3g)", pool, id,
			formatValue(pm, "ms"), formatValue(rm, "ms"), ratio, p)
	case lowest <= shared:
		return nil, fmt.Sprintf("%s %s: slower than the other pools (×%.2f, p = %.3g), but its fastest run (%s) is within the shared value (%s)",
			pool, id, ratio, p, formatValue(lowest, "ms"), formatValue(shared, "ms"))
	}
	newest := mine[len(mine)-1].m
	tol := 0.0
	if newest.Baseline != nil && newest.Limit != nil && *newest.Baseline > 0 {
		tol = *newest.Limit / *newest.Baseline - 1
	}
	o := &PoolOverride{Prefix: pool, Case: id, Shared: shared, Value: lowest, Tolerance: tol,
		Limit: checks.PerfLimit(lowest, tol, checks.E2EPadMs), PoolMedian: pm, RestMedian: rm, P: p, U: u, RestRuns: len(rest)}
	for _, x := range mine {
		o.Runs = append(o.Runs, PoolRun{Run: x.run, Runner: x.runner, Median: x.m.Median, Worst: x.m.Value, Passes: x.m.Value <= o.Limit})
	}
	return o, ""
}

func median(vs []float64) float64 {
	s, _ := checks.SpreadOf(vs)
	return s.Median
}

// mannWhitneyGreater is the one-sided Mann-Whitney U test that xs tend to be greater than
// ys: U counts the pairs with x > y (ties count one half), and p is its upper tail under the
// normal approximation with the tie correction and a continuity correction (good from about
// five values a side).
func mannWhitneyGreater(xs, ys []float64) (u, p float64) {
	n1, n2 := float64(len(xs)), float64(len(ys))
	for _, x := range xs {
		for _, y := range ys {
			switch {
			case x > y:
				u++
			case x == y:
				u += 0.5
			}
		}
	}
	all := append(slices.Clone(xs), ys...)
	slices.Sort(all)
	ties := 0.0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j] == all[i] {
			j++
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	n := n1 + n2
	sd := math.Sqrt(n1 * n2 / 12 * ((n + 1) - ties/(n*(n-1))))
	if sd == 0 {
		return u, 1
	}
	z := (u - n1*n2/2 - 0.5) / sd
	return u, 0.5 * math.Erfc(z/math.Sqrt2)
}

// OverridesJSON is the outcome's entries in the shape of SGLang's runner_overrides, to merge
// into the baseline file: {"runner_overrides": {"<prefix>": {"<scenario>":
// {"expected_e2e_ms": value}}}}, values rounded to 0.01 ms as SGLang's files hold them.
func (o PoolOutcome) OverridesJSON() []byte {
	var b bytes.Buffer
	b.WriteString("{\n    \"runner_overrides\": {")
	var prefixes []string
	for _, x := range o.Overrides {
		if !slices.Contains(prefixes, x.Prefix) {
			prefixes = append(prefixes, x.Prefix)
		}
	}
	slices.Sort(prefixes)
	for i, p := range prefixes {
		if i > 0 {
			b.WriteString(",")
		}
		k, _ := json.Marshal(p)
		fmt.Fprintf(&b, "\n        %s: {", k)
		first := true
		for _, x := range o.Overrides {
			if x.Prefix != p {
				continue
			}
			if !first {
				b.WriteString(",")
			}
			first = false
			id, _ := json.Marshal(x.Case)
			fmt.Fprintf(&b, "\n            %s: {\"expected_e2e_ms\": %.2f}", id, math.Round(x.Value*100)/100)
		}
		b.WriteString("\n        }")
	}
	if len(prefixes) > 0 {
		b.WriteString("\n    ")
	}
	b.WriteString("}\n}\n")
	return b.Bytes()
}

// PoolsMarkdown is the evidence for a pull request that adds the overrides: per entry the
// shared value, the pool's, the test that found it, and the runs behind it, like the table
// SGLang's maintainer wrote by hand; then the pools too new to calibrate.
func PoolsMarkdown(s Series, file string, rule PoolRule, out PoolOutcome, pageURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Runner pools that the history says need their own E2E reference\n\n")
	fmt.Fprintf(&b, "Series: %s. Baseline file: %s.\n\n", md(s.String()), code(file))
	fmt.Fprintf(&b, "Rule (docs/history.md, \"Runner pools\"): runners are pooled by name prefix (SGLang's `runner_overrides`: "+
		"the longest prefix of `RUNNER_NAME`); a pool with at least %d default-branch runs whose E2E medians are slower than the other pools' "+
		"by a one-sided Mann-Whitney rank test (p < %g) and by ×%.2f or more gets the minimum it observed as its `expected_e2e_ms`, "+
		"the tolerance unchanged. The shared scenario is not changed.\n\n", rule.MinRuns, rule.Alpha, rule.MinRatio)
	if len(out.Overrides) == 0 {
		b.WriteString("No pool needs an override.\n\n")
	} else {
		b.WriteString("| pool | case | shared | pool's value | × shared | tolerance | pool's limit | pool median / rest median | p | runs |\n" +
			"|---|---|---:|---:|---:|---:|---:|---|---:|---:|\n")
		for _, o := range out.Overrides {
			id := code(o.Case)
			if pageURL != "" {
				id = fmt.Sprintf("[%s](%s#%s)", id, pageURL, anchorOf(s, o.Case, poolMetric))
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | ×%.2f | %s | %s | %s / %s | %.2g | %d (rest %d) |\n", code(o.Prefix), id,
				formatValue(o.Shared, "ms"), formatValue(o.Value, "ms"), o.Value/o.Shared, percent(o.Tolerance), formatValue(o.Limit, "ms"),
				formatValue(o.PoolMedian, "ms"), formatValue(o.RestMedian, "ms"), o.P, len(o.Runs), o.RestRuns)
		}
		b.WriteString("\n")
		for _, o := range out.Overrides {
			fmt.Fprintf(&b, "<details><summary>The %d runs behind <code>%s</code> on <code>%s</code></summary>\n\n| commit | date | run | runner | median E2E | "+
				"worst E2E | within the pool's limit |\n|---|---|---|---|---:|---:|---|\n",
				len(o.Runs), html.EscapeString(o.Prefix), html.EscapeString(o.Case))
			for _, r := range o.Runs {
				mark := "yes"
				if !r.Passes {
					mark = "**no**"
				}
				if math.Round(r.Median*100)/100 == o.Value {
					mark += " (the minimum)"
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", code(short(r.Run.Commit)), r.Run.Date.UTC().Format("2006-01-02 15:04"), md(r.Run.RunID),
					code(r.Runner), formatValue(r.Median, "ms"), formatValue(r.Worst, "ms"), mark)
			}
			b.WriteString("\n</details>\n\n")
		}
	}
	if len(out.TooNew) > 0 {
		fmt.Fprintf(&b, "### Runners too new to calibrate\n\nFewer than %d default-branch runs: they keep the shared values until they have run more.\n\n",
			rule.MinRuns)
		for _, t := range out.TooNew {
			names := make([]string, len(t.Runners))
			for i, n := range t.Runners {
				names[i] = code(n)
			}
			fmt.Fprintf(&b, "- %s: %s (%d runs)\n", code(t.Prefix), strings.Join(names, ", "), t.Runs)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// runnerNote says, for a failing value of case caseID's metric measured on runner, what the
// history says about that runner beside its pool (the series' other runners, on the default
// branch): "new runner …" when it has fewer than DefaultPoolRule.MinRuns runs of the case,
// and "this runner has been slower than its pool since …" when value lies within the spread
// of the runner's last n runs (their range ± 3 × 1.4826 × MAD) but above the typical runs of
// the pool's last n (without their lowest and highest tenth): the runner, not the change, is
// the likelier cause. "" otherwise, and without
// a runner name.
func runnerNote(runs []*Run, s Series, runner, caseID, metric string, value float64, n int) string {
	if runner == "" {
		return ""
	}
	mine, pool, others := runnerPoints(runs, s, runner, caseID, metric)
	if len(mine) < DefaultPoolRule.MinRuns {
		return fmt.Sprintf("new runner %s: %s of this case in the base branch's history, %d needed to compare it with its pool", runner,
			words.Plural(len(mine), "run"), DefaultPoolRule.MinRuns)
	}
	if len(pool) < DefaultPoolRule.MinRuns {
		return ""
	}
	lastMine, lastPool := lastPoints(mine, n), lastPoints(pool, n)
	mlo, mhi := pointRange(lastMine)
	// The pool's spread is that of its typical runs (without the lowest and highest tenth,
	// as tighten's noise rule): one noisy run of another machine does not hide this one.
	plo, phi, _ := typical(pointValues(lastPool))
	// Within the runner's spread: its range, widened by three robust standard deviations of
	// its runs (the noise scale tighten uses), so that a run a little under its fastest
	// still counts as this runner's.
	sp, _ := checks.SpreadOf(pointValues(lastMine))
	w := 3 * robustSigma * sp.MAD
	if value < mlo-w || value > mhi+w || value <= phi {
		return ""
	}
	// Since the oldest run of the unbroken stretch, up to now, in which this runner was
	// slower than every run of the pool.
	since := len(mine)
	for since > 0 && mine[since-1].v > phi {
		since--
	}
	if since == len(mine) {
		return ""
	}
	first := mine[since].run
	unit := ""
	if m, ok := first.Metric(caseID, metric); ok {
		unit = m.Unit
	}
	return fmt.Sprintf("this runner (%s) has been slower than its pool since %s (%s): its last %s %s–%s, the pool's (%s of %s) %s–%s",
		runner, first.Date.UTC().Format("2006-01-02"), short(first.Commit), words.Plural(len(lastMine), "run"), formatValue(mlo, ""), formatValue(mhi, unit),
		words.Plural(len(lastPool), "run"), words.Plural(len(others), "other runner"), formatValue(plo, ""), formatValue(phi, unit))
}

// runnerPoint is one default-branch run's value of a case's metric, for runnerNote.
type runnerPoint struct {
	run *Run
	v   float64
}

// runnerPoints gathers, oldest first, the values of case caseID's metric in series s's
// default-branch runs: mine those measured on runner, pool those measured on any other
// named runner, whose names are others.
func runnerPoints(runs []*Run, s Series, runner, caseID, metric string) (mine, pool []runnerPoint, others map[string]bool) {
	others = map[string]bool{}
	for _, r := range runs {
		if r.Kind != KindDefault || r.SeriesOf() != s {
			continue
		}
		for i := range r.Cases {
			c := &r.Cases[i]
			if c.ID != caseID {
				continue
			}
			m, ok := r.Metric(caseID, metric)
			name := r.RunnerOf(c)
			switch {
			case !ok || name == "":
			case name == runner:
				mine = append(mine, runnerPoint{r, m.Value})
			default:
				pool = append(pool, runnerPoint{r, m.Value})
				others[name] = true
			}
		}
	}
	return mine, pool, others
}

// lastPoints is the last n of ps (all of them when there are fewer).
func lastPoints(ps []runnerPoint, n int) []runnerPoint { return ps[max(0, len(ps)-n):] }

// pointRange is the lowest and highest value of ps (+Inf and -Inf when there is none).
func pointRange(ps []runnerPoint) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range ps {
		lo, hi = math.Min(lo, p.v), math.Max(hi, p.v)
	}
	return lo, hi
}

// pointValues is the values of ps, in order.
func pointValues(ps []runnerPoint) []float64 {
	var vs []float64
	for _, p := range ps {
		vs = append(vs, p.v)
	}
	return vs
}

// runnerOfCase is the runner name of the partition that ran case caseID in a merged lane:
// the partition whose planned cases hold it (a single partition: the only machine).
func runnerOfCase(lane *results.Result, caseID string) string {
	part := -1
	for i, ids := range lane.Planned {
		if slices.Contains(ids, caseID) {
			part = i
		}
	}
	for _, m := range lane.Machines {
		if m.Partition == part || part < 0 && len(lane.Machines) == 1 {
			return m.RunnerName
		}
	}
	return ""
}
