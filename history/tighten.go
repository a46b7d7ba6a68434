package history

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// Rule is when the history proposes a new baseline value (docs/history.md, "Tightening").
type Rule struct {
	// Runs is N: the last N default-branch runs of the series that measured the metric.
	Runs int
	// Sigmas is k: the worst of the N runs must lie k robust standard deviations
	// (1.4826 × MAD) under the baseline.
	Sigmas float64
	// MinGain is the smallest relative improvement worth a change: the baseline file's
	// improvement_reporting.threshold, the same that makes a check say "possible improvement".
	MinGain float64
	// AllowLoosen also proposes raising a value whose N runs were all above it.
	AllowLoosen bool
}

// DefaultRule is N = 10, k = 3, and SGLang's default improvement threshold of 20%.
var DefaultRule = Rule{Runs: 10, Sigmas: 3, MinGain: 0.2}

// robustSigma turns a median absolute deviation into the standard deviation it estimates
// for normally distributed values.
const robustSigma = 1.4826

// Proposal is one new baseline value: the worst of the last N default-branch runs.
type Proposal struct {
	Case, Metric, Unit string
	Old, New           float64
	// Margin is how far under Old the worst run had to be (k·σ or MinGain·Old, whichever is
	// larger); Loosen marks a raised value (only with AllowLoosen).
	Margin float64
	Loosen bool
	Spread results.Spread
	// Tolerance is the relative tolerance the runs were checked with: limit / baseline − 1
	// of the newest run (pads included).
	Tolerance float64
	// Runs are the N runs, oldest first: the evidence.
	Runs []*Run
}

// Noisy is a metric whose run-to-run spread is wider than its tolerance: a limit that noise
// alone crosses, or that cannot tell a regression from noise.
type Noisy struct {
	Case, Metric, Unit string
	Spread             results.Spread
	// Low and High bound the typical runs: the N values without the Trimmed lowest and
	// Trimmed highest.
	Low, High float64
	Trimmed   int
	Tolerance float64
	Runs      []*Run
}

// Outcome is what Propose found for one series.
type Outcome struct {
	Proposals []Proposal
	Noisy     []Noisy
	// Skipped says, per metric the baseline file holds, why nothing was proposed.
	Skipped []string
}

// Current looks up the value a baseline file holds for a case's metric.
type Current func(caseID, metric string) (float64, bool)

// Propose applies the rule to the default-branch runs of one series (runs oldest first, as
// Load returns them), for every case and metric that current knows:
//
//   - the last N default-branch runs that measured the metric give N worst-of-requests
//     values v; fewer than N: nothing;
//   - spread: when the typical runs (v without its lowest and highest tenth, at least one
//     run each side) span more than the tolerance the runs were checked with, relative to
//     the median, the metric is Noisy and nothing is proposed. One odd run on either end
//     is left out because a one-off slowdown is what confirmation requests are for; a spread
//     that the other runs share is the runner's, and no limit of that tolerance survives it;
//   - tighten: when max v ≤ old − max(k · 1.4826 · MAD(v), MinGain · old), the new value is
//     max v (the worst of N, as a regenerated baseline is the worst of its requests);
//   - loosen: when max v > old, only with AllowLoosen.
func Propose(runs []*Run, s Series, rule Rule, current Current) (Outcome, error) {
	if rule.Runs < 2 {
		return Outcome{}, fmt.Errorf("tightening needs at least 2 runs to see their spread, got %d", rule.Runs)
	}
	var defaults []*Run
	for _, r := range runs {
		if r.Kind == KindDefault && r.SeriesOf() == s {
			defaults = append(defaults, r)
		}
	}
	var out Outcome
	for _, k := range metricKeys(defaults) {
		old, ok := current(k.c, k.m)
		if !ok {
			continue
		}
		var evidence []*Run
		var values []Metric
		for i := len(defaults) - 1; i >= 0 && len(evidence) < rule.Runs; i-- {
			if m, ok := defaults[i].Metric(k.c, k.m); ok {
				evidence = append(evidence, defaults[i])
				values = append(values, m)
			}
		}
		if len(evidence) < rule.Runs {
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s %s: %d default-branch runs, %d needed", k.c, k.m, len(evidence), rule.Runs))
			continue
		}
		slices.Reverse(evidence)
		slices.Reverse(values)
		newest := values[len(values)-1]
		if newest.Baseline == nil || newest.Limit == nil || *newest.Baseline <= 0 {
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s %s: the newest run did not check it against a baseline", k.c, k.m))
			continue
		}
		tol := *newest.Limit / *newest.Baseline - 1
		vs := make([]float64, len(values))
		for i, m := range values {
			vs[i] = m.Value
		}
		sp, _ := checks.SpreadOf(vs)
		if lo, hi, trimmed := typical(vs); sp.Median > 0 && (hi-lo)/sp.Median > tol {
			out.Noisy = append(out.Noisy, Noisy{Case: k.c, Metric: k.m, Unit: newest.Unit, Spread: sp,
				Low: lo, High: hi, Trimmed: trimmed, Tolerance: tol, Runs: evidence})
			continue
		}
		margin := math.Max(rule.Sigmas*robustSigma*sp.MAD, rule.MinGain*old)
		p := Proposal{Case: k.c, Metric: k.m, Unit: newest.Unit, Old: old, New: sp.Max, Margin: margin, Spread: sp, Tolerance: tol, Runs: evidence}
		switch {
		case sp.Max <= old-margin:
			out.Proposals = append(out.Proposals, p)
		case sp.Max > old && rule.AllowLoosen:
			p.Loosen = true
			out.Proposals = append(out.Proposals, p)
		case sp.Max > old:
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s %s: the worst of %d runs (%s) is above the baseline (%s); raising it needs --allow-loosen",
				k.c, k.m, rule.Runs, formatValue(sp.Max, p.Unit), formatValue(old, p.Unit)))
		default:
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s %s: the worst of %d runs (%s) is not %s under the baseline (%s)",
				k.c, k.m, rule.Runs, formatValue(sp.Max, p.Unit), formatValue(margin, p.Unit), formatValue(old, p.Unit)))
		}
	}
	return out, nil
}

// metricKey is one case and metric of a series.
type metricKey struct{ c, m string }

// metricKeys are the cases and metrics that runs hold, sorted by case, then metric.
func metricKeys(runs []*Run) []metricKey {
	var keys []metricKey
	seen := map[metricKey]bool{}
	for i := len(runs) - 1; i >= 0; i-- {
		for _, c := range runs[i].Cases {
			for _, m := range c.Metrics {
				if k := (metricKey{c.ID, m.Name}); !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
		}
	}
	slices.SortFunc(keys, func(a, b metricKey) int {
		if a.c != b.c {
			return strings.Compare(a.c, b.c)
		}
		return strings.Compare(a.m, b.m)
	})
	return keys
}

// typical returns the lowest and highest of the typical values: vs sorted, without its
// lowest and highest tenth (at least one each side when there are three values or more),
// and how many were left out each side.
func typical(vs []float64) (lo, hi float64, trimmed int) {
	s := slices.Sorted(slices.Values(vs))
	if len(s) >= 3 {
		trimmed = max(1, len(s)/10)
	}
	return s[trimmed], s[len(s)-1-trimmed], trimmed
}
