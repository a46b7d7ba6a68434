package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/results"
)

// metric is one row of the cross-request view: a check (with its source when a check is
// measured from several), or one of the two E2E times, which are measurements and not
// necessarily checks.
type metric struct {
	name, source string
	e2e          string // "client" or "server" for the times a request took, else ""
}

// The two E2E figures: the client's is what diffusion-check measured from sending the
// request to having the output; the server's is the total_duration_ms of its perf record,
// which the baselines and the perf.e2e limit are about.
const (
	e2eClient = "E2E (client)"
	e2eServer = "E2E (server)"
)

func (m metric) label() string {
	if m.e2e != "" {
		return m.e2e
	}
	ck := results.Check{Name: m.name, Source: m.source}
	return escape(title(&ck))
}

// crossRequest is, per case with ≥ 2 requests, one row per metric: its value on every
// request and its limit, so drift between the cold and the warm request shows.
func crossRequest(b *strings.Builder, l *results.Result, multi bool, lv level) {
	var cases []*results.CaseResult
	width := 0
	for i := range l.Cases {
		c := &l.Cases[i]
		if len(c.Requests) < 2 || (!lv.crossAll && !bad(c.Status)) {
			continue
		}
		cases = append(cases, c)
		width = max(width, len(c.Requests))
	}
	if len(cases) == 0 {
		return
	}
	slices.SortStableFunc(cases, func(a, b *results.CaseResult) int { return cmp.Compare(severity(a.Status), severity(b.Status)) })
	lane := ""
	if multi {
		lane = " of lane " + escape(l.Lane)
	}
	fmt.Fprintf(b, "\n<details><summary>Across requests%s: %s with repeated requests</summary>\n\n", lane, words.Plural(len(cases), "case"))
	b.WriteString("| Case | Metric |")
	for i := 1; i <= width; i++ {
		fmt.Fprintf(b, " %d |", i)
	}
	b.WriteString(" Limit |\n|---|---|" + strings.Repeat("---|", width) + "---|\n")
	for _, c := range cases {
		for _, m := range caseMetrics(c) {
			fmt.Fprintf(b, "| %s | %s |", code(c.ID), m.label())
			limit := ""
			for i := 0; i < width; i++ {
				cell := ""
				if i < len(c.Requests) {
					cell = metricCell(&c.Requests[i], m)
					if ck := metricCheck(&c.Requests[i], m); ck != nil && limit == "" {
						limit = limitText(ck)
					}
				}
				b.WriteString(" " + cell + " |")
			}
			b.WriteString(" " + unbroken(cmp.Or(limit, "—")) + " |\n")
		}
	}
	b.WriteString("\n</details>\n")
}

func metricCell(rr *results.RequestResult, m metric) string {
	if ck := metricCheck(rr, m); ck != nil && ck.Value != nil {
		return mark(ck, unbroken(value(ck)))
	}
	switch {
	case m.e2e == e2eClient && rr.E2EMs > 0:
		return unbroken(fmtMs(rr.E2EMs))
	case m.e2e == e2eServer && rr.ServerTotalMs > 0:
		return unbroken(fmtMs(rr.ServerTotalMs))
	}
	return "—"
}

// metricCheck is the check a metric row shows on a request: the server E2E row shows the
// check of the E2E column when there is one.
func metricCheck(rr *results.RequestResult, m metric) *results.Check {
	switch m.e2e {
	case e2eServer:
		return findCheck(rr.Checks, inColumn(checks.ColumnE2E))
	case e2eClient:
		return nil
	}
	for i := range rr.Checks {
		if ck := &rr.Checks[i]; ck.Name == m.name && ck.Source == m.source {
			return ck
		}
	}
	return nil
}

// caseMetrics: both E2E times, then every measured check in first-seen order, leaving out
// the detailed ones (per stage, per step) unless one of them did not pass.
func caseMetrics(c *results.CaseResult) []metric {
	out := []metric{{e2e: e2eClient}, {e2e: e2eServer}}
	seen := map[metric]bool{}
	failing := map[metric]bool{}
	for _, rr := range c.Requests {
		for _, ck := range rr.Checks {
			if failed(ck.Status) {
				failing[metric{name: ck.Name, source: ck.Source}] = true
			}
		}
	}
	for _, rr := range c.Requests {
		for _, ck := range rr.Checks {
			m := metric{name: ck.Name, source: ck.Source}
			k := checks.KindOf(ck.Name)
			if seen[m] || ck.Value == nil || k.Column == checks.ColumnE2E || (k.Detailed && !failing[m]) {
				continue
			}
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}
