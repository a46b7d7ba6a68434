package history

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// String says why a metric is noisy, in one line.
func (n Noisy) String() string {
	without := ""
	if n.Trimmed > 0 {
		without = fmt.Sprintf(" without the %d lowest and %d highest", n.Trimmed, n.Trimmed)
	}
	return fmt.Sprintf("%s %s: the last %d default-branch runs%s spread %s of their median (%s to %s), wider than its tolerance %s",
		n.Case, n.Metric, n.Spread.N, without, percent((n.High-n.Low)/n.Spread.Median), formatValue(n.Low, n.Unit), formatValue(n.High, n.Unit), percent(n.Tolerance))
}

func percent(f float64) string { return fmt.Sprintf("%.1f%%", f*100) }

// md escapes text from a store file for a Markdown table cell: a store file from a pull
// request is untrusted, and a cell must neither end early nor carry markup or mentions.
func md(s string) string {
	r := strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;", "`", "'", "@", "@\u200b", "[", `\[`, "]", `\]`, "*", `\*`, "_", `\_`)
	return r.Replace(s)
}

// code is s as a Markdown code span in a table cell: no markup is read inside one, but a
// backquote would end it and a pipe the cell.
func code(s string) string {
	return "`" + strings.NewReplacer("`", "'", "|", `\|`, "\n", " ", "\r", " ").Replace(s) + "`"
}

// ProposalMarkdown is the body of a tightening pull request: the rule, one section per
// proposed value with its N runs and a link to its chart (pageURL + "#" + anchorOf; no link
// without a page), and the metrics that noise makes useless.
func ProposalMarkdown(s Series, file string, rule Rule, out Outcome, pageURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Baselines that the history says can be tighter\n\n")
	fmt.Fprintf(&b, "Series: %s. Baseline file: %s.\n\n", md(s.String()), code(file))
	fmt.Fprintf(&b, "Rule (docs/history.md): a value is proposed when the last %d default-branch runs all measured it, the spread "+
		"of the typical runs (without the lowest and highest tenth) is within its tolerance, "+
		"and their worst is at least max(%g × 1.4826 × MAD, %s of the baseline) under it; "+
		"the new value is that worst.", rule.Runs, rule.Sigmas, percent(rule.MinGain))
	if rule.AllowLoosen {
		b.WriteString(" **--allow-loosen**: values whose runs were all above them are raised too.")
	}
	b.WriteString("\n\n")
	if len(out.Proposals) == 0 {
		b.WriteString("Nothing to change.\n\n")
	} else {
		b.WriteString("| case | metric | baseline | new | change | margin needed | spread of the runs |\n|---|---|---:|---:|---:|---:|---|\n")
		for _, p := range out.Proposals {
			metric := md(metricTitle(p.Metric))
			if pageURL != "" {
				metric = fmt.Sprintf("[%s](%s#%s)", metric, pageURL, anchorOf(s, p.Case, p.Metric))
			}
			change := percent(p.New/p.Old - 1)
			if p.Loosen {
				change += " ⚠️ loosened"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s … %s (median %s, MAD %s) |\n", code(p.Case), metric,
				formatValue(p.Old, p.Unit), formatValue(p.New, p.Unit), change, formatValue(p.Margin, p.Unit),
				formatValue(p.Spread.Min, p.Unit), formatValue(p.Spread.Max, p.Unit), formatValue(p.Spread.Median, p.Unit), formatValue(p.Spread.MAD, p.Unit))
		}
		b.WriteString("\n")
		writeRuns(&b, out.Proposals)
	}
	if len(out.Noisy) > 0 {
		b.WriteString("### Baselines that noise makes useless\n\nTheir runs spread wider than their tolerance: " +
			"a limit that noise alone crosses, or that cannot tell a regression from noise. " +
			"Widen the tolerance, make the measurement steadier, or drop the check.\n\n")
		for _, n := range out.Noisy {
			fmt.Fprintf(&b, "- %s\n", md(n.String()))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// writeRuns lists, per case, the runs that are the evidence and each proposed metric's value
// in them.
func writeRuns(b *strings.Builder, ps []Proposal) {
	var cases []string
	byCase := map[string][]Proposal{}
	for _, p := range ps {
		if _, ok := byCase[p.Case]; !ok {
			cases = append(cases, p.Case)
		}
		byCase[p.Case] = append(byCase[p.Case], p)
	}
	for _, c := range cases {
		group := byCase[c]
		fmt.Fprintf(b, "<details><summary>The %d runs of <code>%s</code></summary>\n\n| commit | date | run | status |", len(group[0].Runs), html.EscapeString(c))
		for _, p := range group {
			fmt.Fprintf(b, " %s |", md(metricTitle(p.Metric)))
		}
		b.WriteString("\n|---|---|---|---|" + strings.Repeat("---:|", len(group)) + "\n")
		for _, r := range group[0].Runs {
			fmt.Fprintf(b, "| %s | %s | %s | %s |", code(short(r.Commit)), r.Date.UTC().Format("2006-01-02 15:04"), md(r.RunID), md(string(r.Status)))
			for _, p := range group {
				v := "-"
				if m, ok := r.Metric(c, p.Metric); ok {
					v = formatValue(m.Value, m.Unit)
				}
				fmt.Fprintf(b, " %s |", v)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n</details>\n\n")
	}
}

// trendOf is what the base branch's last runs say about one metric, for a PR comment: the
// median and range of the last n default-branch runs of the series and a sparkline of
// them, oldest first. ok is false when the history has none.
func trendOf(runs []*Run, s Series, caseID, metric string, n int) (median, lo, hi float64, spark string, ok bool) {
	var vs []float64
	for i := len(runs) - 1; i >= 0 && len(vs) < n; i-- {
		r := runs[i]
		if r.Kind != KindDefault || r.SeriesOf() != s {
			continue
		}
		if m, found := r.Metric(caseID, metric); found {
			vs = append(vs, m.Value)
		}
	}
	if len(vs) == 0 {
		return math.NaN(), math.NaN(), math.NaN(), "", false
	}
	slices.Reverse(vs)
	sp, _ := checks.SpreadOf(vs)
	return sp.Median, sp.Min, sp.Max, sparkline(vs), true
}

// trendNote is the comment's line about one metric of a case against the base branch's
// history: "base branch, last 10 runs: median 470 ms (460–617 ms) ▁▂▁█▁ · [chart](URL#id)".
// It is "" when the history has no default-branch run of it; no link without pageURL.
func trendNote(runs []*Run, s Series, caseID, metric string, n int, pageURL string) string {
	med, lo, hi, spark, ok := trendOf(runs, s, caseID, metric, n)
	if !ok {
		return ""
	}
	unit := ""
	for i := len(runs) - 1; i >= 0 && unit == ""; i-- {
		if m, found := runs[i].Metric(caseID, metric); found {
			unit = m.Unit
		}
	}
	count := len([]rune(spark))
	note := fmt.Sprintf("base branch, last %d runs: median %s (%s–%s) %s", count, formatValue(med, unit), formatValue(lo, ""), formatValue(hi, unit), spark)
	if pageURL != "" {
		note += fmt.Sprintf(" · [chart](%s#%s)", pageURL, anchorOf(s, caseID, metric))
	}
	return note
}

// CommentTrend is the hook for a PR comment's failing checks: for a perf or memory check of
// case caseID in the merged lane result lane, trendNote against the base branch's last n
// runs of the lane's series, and for a perf check runnerNote about the runner that ran the
// case; "" for other checks and where the history has none. runs come from Load (a store
// checked out from the data branch).
func CommentTrend(runs []*Run, pageURL string, n int) func(lane *results.Result, caseID string, c results.Check) string {
	return func(lane *results.Result, caseID string, c results.Check) string {
		if g := checks.KindOf(c.Name).Group; g != checks.GroupPerf && g != checks.GroupMemory {
			return ""
		}
		s := seriesOfLane(runs, lane)
		metric := baselines.SpreadKey(c.Name, c.Source)
		note := trendNote(runs, s, caseID, metric, n, pageURL)
		if checks.KindOf(c.Name).Group == checks.GroupPerf && c.Value != nil {
			if r := runnerNote(runs, s, runnerOfCase(lane, caseID), caseID, metric, *c.Value, n); r != "" {
				note = strings.TrimPrefix(note+" · "+r, " · ")
			}
		}
		return note
	}
}

// seriesOfLane is the series of a merged lane's runs in the store: its suite, lane and GPU;
// or, when the store has no run of that lane, the lane-less series of the same suite and GPU,
// which history append writes for results of a run without --lane (the lane is then its
// cases', which report names: "base").
func seriesOfLane(runs []*Run, lane *results.Result) Series {
	s := Series{Suite: lane.Suite, Lane: lane.Lane, GPU: lane.GPU}
	unlaned := Series{Suite: lane.Suite, GPU: lane.GPU}
	found := false
	for _, r := range runs {
		switch r.SeriesOf() {
		case s:
			return s
		case unlaned:
			found = true
		}
	}
	if found {
		return unlaned
	}
	return s
}
