package report

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
)

// fmtValue shows a measurement of a check kind in its unit: times over a second in seconds,
// memory in whole MiB, similarities with the decimals of their kind.
func fmtValue(v float64, k checks.Kind) string {
	switch k.Unit {
	case "ms":
		return fmtMs(v)
	case "MiB":
		return strconv.FormatFloat(v, 'f', 0, 64) + " MiB"
	}
	var s string
	if k.Decimals <= 0 {
		s = strconv.FormatFloat(v, 'g', 6, 64)
	} else {
		s = strconv.FormatFloat(v, 'f', k.Decimals, 64)
	}
	if k.Unit != "" {
		s += " " + cellEscape(k.Unit)
	}
	return s
}

// fmtMs shows a time: seconds with one decimal from a second up, else milliseconds.
func fmtMs(v float64) string {
	if v >= 1000 || v <= -1000 {
		return strconv.FormatFloat(v/1000, 'f', 1, 64) + " s"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " ms"
}

// kindOf is the kind of a check as written: its registered kind, with the check's own unit
// when the check has one the kind does not (a results file of another version).
func kindOf(ck *checks.Check) checks.Kind {
	k := checks.KindOf(ck.Name)
	if ck.Unit != "" && ck.Unit != k.Unit {
		k.Unit, k.Decimals = normUnit(ck.Unit), 0
	}
	return k
}

func normUnit(u string) string {
	switch u {
	case "MB", "mb":
		return "MiB"
	case "db":
		return "dB"
	}
	return u
}

// value is a check's value in its unit, or "—".
func value(ck *checks.Check) string {
	if ck.Value == nil {
		return "—"
	}
	return fmtValue(*ck.Value, kindOf(ck))
}

// limitText is "≤ 66.0 s" or "≥ 0.9200"; "" without a limit.
func limitText(ck *checks.Check) string {
	if ck.Limit == nil {
		return ""
	}
	k := kindOf(ck)
	return k.Op() + " " + fmtValue(*ck.Limit, k)
}

// ratio is value / limit as "1.23×", the factor a reader compares with 1; "" when there is
// no such factor.
func ratio(ck *checks.Check) string {
	if ck.Value == nil || ck.Limit == nil || *ck.Limit == 0 {
		return ""
	}
	return strconv.FormatFloat(*ck.Value / *ck.Limit, 'f', 2, 64) + "×"
}

// spreadText is how far a check's value lies from the median of its baseline's spread, in
// median absolute deviations: "+4.1 MAD". A zero MAD (one request, or values all alike)
// gives no such unit: then it says whether the value lies outside every value the baseline
// saw. "" without spread data or a value.
func spreadText(ck *checks.Check) string {
	sp := ck.Spread
	if sp == nil || ck.Value == nil {
		return ""
	}
	if d, ok := sp.MADs(*ck.Value); ok {
		return fmt.Sprintf("%+.1f MAD", d)
	}
	if sp.Outside(*ck.Value) {
		return "outside a zero spread of " + plural(sp.N, "request")
	}
	return "within a zero spread of " + plural(sp.N, "request")
}

// mark is a value in a table cell: bold with its icon when it did not pass (the icon alone
// for an empty value).
func mark(ck *checks.Check, s string) string {
	switch ck.Status {
	case checks.Pass, checks.Skip:
		return s
	case checks.Known, checks.Flaky:
		return strings.TrimSpace(icon(ck.Status) + nbsp + s)
	}
	if s == "" {
		return "**" + icon(ck.Status) + "**"
	}
	return "**" + icon(ck.Status) + nbsp + s + "**"
}

// findCheck returns the most telling check among those that match: a failure over a pass,
// then the one closest to (or furthest past) its limit.
func findCheck(cs []checks.Check, match func(checks.Kind) bool) *checks.Check {
	var best *checks.Check
	for i := range cs {
		ck := &cs[i]
		if !match(checks.KindOf(ck.Name)) {
			continue
		}
		if best == nil || worse(ck, best) {
			best = ck
		}
	}
	return best
}

// worse orders checks for a reader: by status, then by how far past its limit.
func worse(a, b *checks.Check) bool {
	if sa, sb := severity(a.Status), severity(b.Status); sa != sb {
		return sa < sb
	}
	return beyond(a) > beyond(b)
}

// beyond is how far a check's value is past its limit (checks.Kind.Beyond); -1 without a
// value.
func beyond(ck *checks.Check) float64 {
	if ck.Value == nil {
		return -1
	}
	if ck.Limit == nil {
		return 0
	}
	return checks.KindOf(ck.Name).Beyond(*ck.Value, *ck.Limit)
}

// title is what a reader calls a check, with its source when it has one.
func title(ck *checks.Check) string {
	s := checks.KindOf(ck.Name).Title(ck.Name)
	if ck.Source != "" {
		s += " (" + ck.Source + ")"
	}
	return s
}

func severity(s checks.Status) int {
	switch s {
	case checks.Fail:
		return 0
	case checks.Error:
		return 1
	case checks.Cancelled:
		return 2
	case checks.Flaky:
		return 3
	case checks.Known:
		return 4
	case checks.Skip:
		return 5
	case checks.Pass:
		return 6
	}
	return 0 // not ours: as bad as a failure
}

func firstLine(s string) string {
	f, _, _ := strings.Cut(strings.TrimRight(s, "\n"), "\n")
	return f
}

// cellEscape makes text safe inside a table cell: no line breaks, no pipes, no HTML.
func cellEscape(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	s = strings.ReplaceAll(s, "\n", " ")
	return htmlEscape(strings.ReplaceAll(s, "|", `\|`))
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// mdEscape keeps a name from being read as emphasis or a link.
func mdEscape(s string) string {
	return strings.NewReplacer("*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", "&lt;", "`", "'").Replace(s)
}

func quoteLines(s string) string {
	return strings.ReplaceAll(htmlEscape(strings.TrimRight(s, "\n")), "\n", "\n> ")
}

// code is s as inline code, safe in a table cell.
func code(s string) string { return "`" + cellEscape(cmp.Or(s, "?")) + "`" }
