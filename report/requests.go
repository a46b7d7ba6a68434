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

// row is one line of the per-request table.
type row struct {
	c  *results.CaseResult
	rr *results.RequestResult // nil for a case that ran no request
}

func (x row) status() results.Status {
	if x.rr == nil {
		return x.c.Status
	}
	return x.rr.Status
}

// column is one value column of the compact per-request table. The table has one row per
// request and values only — limits, ratios and causes are in the problems above it — so
// that it fits GitHub's comment width (about 860 px) without wrapping a value: units that
// do not change go in the heading, and a value never breaks between number and unit. A
// column that no row of the lane has a value for is left out.
type column struct {
	head string
	cell func(x row) string // "" when the row has nothing for it
}

var columns = []column{
	{"E2E (server)", cellE2E},
	{"VRAM (MiB)", cellVRAM},
	{"SSIM", func(x row) string { return cellKind(x, checks.ColumnSSIM) }},
	{"PSNR (dB)", func(x row) string { return cellKind(x, checks.ColumnPSNR) }},
	{"Audio", cellAudio},
	{"Other failed checks", cellOther},
}

// nbsp joins a number and its unit, or an icon and its value, so that a cell never breaks
// them apart.
const nbsp = "\u00a0"

// bare is a check's value without its unit (the column heading has it), unbreakable.
func bare(ck *results.Check) string {
	k := kindOf(ck)
	k.Unit = ""
	return fmtValue(*ck.Value, k)
}

// requestTable is the per-request table of a lane, failing rows first.
func requestTable(b *strings.Builder, l *results.Result, lv level) {
	var rows []row
	for i := range l.Cases {
		c := &l.Cases[i]
		if len(c.Requests) == 0 {
			rows = append(rows, row{c: c})
			continue
		}
		for j := range c.Requests {
			rows = append(rows, row{c: c, rr: &c.Requests[j]})
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(severity(a.status()), severity(b.status())) })
	hidden := 0
	if !lv.passingRows {
		kept := rows[:0:0]
		for _, x := range rows {
			if x.status() == results.Pass {
				hidden++
				continue
			}
			kept = append(kept, x)
		}
		rows = kept
	}
	more := 0
	if lv.maxRows > 0 && len(rows) > lv.maxRows {
		more = len(rows) - lv.maxRows
		rows = rows[:lv.maxRows]
	}
	if len(rows) > 0 {
		cells := make([][]string, len(rows))
		var shown []int
		for ci, col := range columns {
			filled := false
			for ri, x := range rows {
				s := col.cell(x)
				cells[ri] = append(cells[ri], s)
				filled = filled || s != ""
			}
			if filled {
				shown = append(shown, ci)
			}
		}
		b.WriteString("\n| Case | Req |")
		for _, ci := range shown {
			b.WriteString(" " + columns[ci].head + " |")
		}
		b.WriteString("\n|---|---|" + strings.Repeat("---|", len(shown)) + "\n")
		for ri, x := range rows {
			req := "—"
			if x.rr != nil {
				req = fmt.Sprintf("%d/%d", x.rr.Index, x.rr.Of)
			}
			fmt.Fprintf(b, "| %s | %s%s%s |", code(x.c.ID), icon(x.status()), nbsp, req)
			for _, ci := range shown {
				b.WriteString(" " + cmp.Or(cells[ri][ci], "—") + " |")
			}
			b.WriteString("\n")
		}
	}
	if hidden > 0 || more > 0 {
		var s []string
		if more > 0 {
			s = append(s, words.Plural(more, "more request")+" that did not pass")
		}
		if hidden > 0 {
			s = append(s, words.Plural(hidden, "passing request"))
		}
		fmt.Fprintf(b, "\n_%s not shown._\n", strings.Join(s, " and "))
	}
}

// rowChecks are the checks of a row: a request's, and for the first request (or a case
// without requests) the case-level ones too, such as a failed server start.
func rowChecks(x row) []results.Check {
	if x.rr == nil {
		return x.c.Checks
	}
	if x.rr.Index == 1 || x.rr.Index == firstIndex(x.c) {
		return append(slices.Clone(x.c.Checks), x.rr.Checks...)
	}
	return x.rr.Checks
}

func firstIndex(c *results.CaseResult) int {
	if len(c.Requests) == 0 {
		return 0
	}
	return c.Requests[0].Index
}

// columnOf is the column that shows a check: its kind's, except host memory, which is not
// VRAM and goes among the others.
func columnOf(ck *results.Check) checks.Column {
	k := checks.KindOf(ck.Name)
	if k.Column == checks.ColumnVRAM && checks.HostMemory(ck.Source) {
		return checks.ColumnNone
	}
	return k.Column
}

func inColumn(c checks.Column) func(checks.Kind) bool {
	return func(k checks.Kind) bool { return k.Column == c }
}

// cellKind is the most telling check of a column, marked when it did not pass.
func cellKind(x row, c checks.Column) string {
	if x.rr == nil {
		return ""
	}
	ck := findCheck(x.rr.Checks, inColumn(c))
	if ck == nil {
		return ""
	}
	if ck.Value == nil {
		if failed(ck.Status) {
			return mark(ck, "no value")
		}
		return ""
	}
	if c == checks.ColumnE2E {
		return mark(ck, unbroken(value(ck)))
	}
	return mark(ck, bare(ck))
}

// unbroken keeps a value on one line.
func unbroken(s string) string { return strings.ReplaceAll(s, " ", nbsp) }

// cellE2E is the server's E2E (its total_duration_ms), which the baseline limits; the
// client's time is in the cross-request view.
func cellE2E(x row) string {
	if s := cellKind(x, checks.ColumnE2E); s != "" {
		return s
	}
	if x.rr != nil && x.rr.ServerTotalMs > 0 {
		return unbroken(fmtMs(x.rr.ServerTotalMs))
	}
	return ""
}

// cellVRAM is the runtime peak of the request as one figure: the highest value among the
// sources that have a limit (else among all measured sources), marked with the worst status
// of them, so that every row shows the same kind of figure; the problems say which source
// failed.
func cellVRAM(x row) string {
	if x.rr == nil {
		return ""
	}
	var top, worst *results.Check
	limited := false
	for i := range x.rr.Checks {
		ck := &x.rr.Checks[i]
		if columnOf(ck) != checks.ColumnVRAM {
			continue
		}
		if worst == nil || severity(ck.Status) < severity(worst.Status) {
			worst = ck
		}
		if ck.Value == nil || (limited && ck.Limit == nil) {
			continue
		}
		if ck.Limit != nil && !limited {
			top, limited = nil, true
		}
		if top == nil || *ck.Value > *top.Value {
			top = ck
		}
	}
	switch {
	case top != nil:
		return mark(worst, bare(top))
	case worst != nil && failed(worst.Status):
		return mark(worst, "no value")
	default:
		v := 0.0
		for src, mib := range x.rr.PeakVRAMMiB {
			if !strings.Contains(src, ":") && !checks.HostMemory(src) {
				v = max(v, mib)
			}
		}
		if v > 0 {
			return fmtValue(v, checks.Kind{})
		}
	}
	return ""
}

// cellAudio is ✅ when every audio check passed, 🟡 when one is a known failure, else the
// icon of the worst; the problems name the metric.
func cellAudio(x row) string {
	if x.rr == nil {
		return ""
	}
	ck := findCheck(x.rr.Checks, inColumn(checks.ColumnAudio))
	if ck == nil {
		return ""
	}
	if failed(ck.Status) {
		return mark(ck, "")
	}
	return icon(results.Pass)
}

// maxOther is how many checks outside the columns a cell names before "+N more".
const maxOther = 2

// cellOther names the checks outside the columns that did not pass, each with its value (or
// its cause when it has none); the ones derived from the denoising stage's steps are counted
// after them ("+7 step metrics") unless nothing else failed, so that a slow stage does not
// push its own steps into the cell.
func cellOther(x row) string {
	var named, steps []*results.Check
	cs := rowChecks(x)
	for i := range cs {
		ck := &cs[i]
		if !failed(ck.Status) || columnOf(ck) != checks.ColumnNone {
			continue
		}
		if derived(ck) {
			steps = append(steps, ck)
		} else {
			named = append(named, ck)
		}
	}
	if len(named) == 0 && len(steps) > 0 {
		named, steps = steps[:1], steps[1:]
	}
	var out []string
	for i, ck := range named {
		if i == maxOther {
			out = append(out, fmt.Sprintf("+%d more", len(named)-maxOther))
			break
		}
		what := escape(title(ck))
		if ck.Value != nil {
			what += " " + unbroken(value(ck))
		} else if c := cause(ck); c != "" {
			what = escape(clip(words.FirstLine(c), 40))
		}
		out = append(out, mark(ck, what))
	}
	if len(steps) > 0 {
		out = append(out, "+"+words.Plural(len(steps), "step metric"))
	}
	if x.rr == nil && len(x.c.Errors) > 0 {
		out = append(out, "⛔ "+words.Plural(len(x.c.Errors), "error"))
	}
	if len(out) == 0 {
		switch {
		case x.rr == nil:
			return "no requests ran"
		case x.rr.Status == results.Skip:
			return "not run"
		case x.rr.Status == results.Cancelled:
			return "cancelled"
		}
	}
	return strings.Join(out, "<br>")
}
