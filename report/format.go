package report

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/untrusted"
	"github.com/diffusion-check/diffusion-check/results"
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
		s += " " + escape(k.Unit)
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
func kindOf(ck *results.Check) checks.Kind {
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
func value(ck *results.Check) string {
	if ck.Value == nil {
		return "—"
	}
	return fmtValue(*ck.Value, kindOf(ck))
}

// limitText is "≤ 66.0 s" or "≥ 0.9200"; "" without a limit.
func limitText(ck *results.Check) string {
	if ck.Limit == nil {
		return ""
	}
	k := kindOf(ck)
	return k.Op() + " " + fmtValue(*ck.Limit, k)
}

// ratio is value / limit as "1.23× the limit", the factor a reader compares with 1; "" when
// there is no such factor. It names what it is against: a bare "1.23×" beside a baseline
// reads as a factor of the baseline, which is what the cause ("+35 % vs baseline") tells.
func ratio(ck *results.Check) string {
	if ck.Value == nil || ck.Limit == nil || *ck.Limit == 0 {
		return ""
	}
	return strconv.FormatFloat(*ck.Value / *ck.Limit, 'f', 2, 64) + "× the limit"
}

// maxMADs is the largest distance from the baseline's median that spreadText writes as a
// number; past it the figure says only "far outside", which ">100 MAD" says without five
// digits that look precise (docs/noise.md, "How the distance is written").
const maxMADs = 100

// spreadText is how far a check's value lies from the median of its baseline's spread, in
// median absolute deviations ("+4.1 MAD", ">100 MAD" past maxMADs), or in plain words where
// that unit says nothing: a MAD of zero ("baseline had no spread") or below the resolution of
// the measurement ("baseline spread under 1 ms"). "" without spread data or a value.
func spreadText(ck *results.Check) string {
	sp := ck.Spread
	if sp == nil || ck.Value == nil || sp.N <= 0 {
		return ""
	}
	if sp.N == 1 {
		return "baseline of 1 request: no spread"
	}
	if d, ok := sp.MADs(*ck.Value); ok {
		k := kindOf(ck)
		if res := resolution(k); sp.MAD < res {
			return "baseline spread under " + fmtResolution(res, k)
		}
		switch {
		case d > maxMADs:
			return fmt.Sprintf(">%d MAD", maxMADs)
		case d < -maxMADs:
			return fmt.Sprintf("<-%d MAD", maxMADs)
		}
		return fmt.Sprintf("%+.1f MAD", d)
	}
	if sp.Outside(*ck.Value) {
		return fmt.Sprintf("baseline had no spread (%d requests)", sp.N)
	}
	return fmt.Sprintf("within the baseline's values, no spread (%d requests)", sp.N)
}

// resolution is the smallest difference a measurement of kind k tells apart, as the report
// reckons it: one unit for times and memory (SGLang's perf records and baselines count in ms
// and MiB, and a MAD under 1 ms measures the host's timer rather than the GPU's work), else
// the last decimal the kind is shown with; 0 (no floor) for a plain number.
func resolution(k checks.Kind) float64 {
	switch k.Unit {
	case "ms", "MiB":
		return 1
	}
	if k.Decimals > 0 {
		return math.Pow(10, -float64(k.Decimals))
	}
	return 0
}

// fmtResolution writes a resolution in its unit with no more decimals than it has: "1 ms",
// "1 MiB", "0.01 dB".
func fmtResolution(res float64, k checks.Kind) string {
	s := strconv.FormatFloat(res, 'f', -1, 64)
	if k.Unit != "" {
		s += " " + escape(k.Unit)
	}
	return s
}

// mark is a value in a table cell: bold with its icon when it did not pass (the icon alone
// for an empty value).
func mark(ck *results.Check, s string) string {
	switch ck.Status {
	case results.Pass, results.Skip:
		return s
	case results.Known, results.Flaky:
		return strings.TrimSpace(icon(ck.Status) + nbsp + s)
	}
	if s == "" {
		return "**" + icon(ck.Status) + "**"
	}
	return "**" + icon(ck.Status) + nbsp + s + "**"
}

// findCheck returns the most telling check among those that match: a failure over a pass,
// then the one closest to (or furthest past) its limit.
func findCheck(cs []results.Check, match func(checks.Kind) bool) *results.Check {
	var best *results.Check
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
func worse(a, b *results.Check) bool {
	if sa, sb := severity(a.Status), severity(b.Status); sa != sb {
		return sa < sb
	}
	return beyond(a) > beyond(b)
}

// beyond is how far a check's value is past its limit (checks.Kind.Beyond); -1 without a
// value.
func beyond(ck *results.Check) float64 {
	if ck.Value == nil {
		return -1
	}
	if ck.Limit == nil {
		return 0
	}
	return checks.KindOf(ck.Name).Beyond(*ck.Value, *ck.Limit)
}

// title is what a reader calls a check, with its source when it has one.
func title(ck *results.Check) string {
	s := checks.KindOf(ck.Name).Title(ck.Name)
	if ck.Source != "" {
		s += " (" + ck.Source + ")"
	}
	return s
}

func severity(s results.Status) int {
	switch s {
	case results.Fail:
		return 0
	case results.Error:
		return 1
	case results.Cancelled:
		return 2
	case results.Flaky:
		return 3
	case results.Known:
		return 4
	case results.Skip:
		return 5
	case results.Pass:
		return 6
	}
	return 0 // not ours: as bad as a failure
}

// escape is the one way untrusted text (lane and case names, check names, details, known-
// failure reasons, server messages and logs from results files: a pull request can write
// any of them) goes into the report's Markdown outside a code block. It makes the text one
// inert line that reads the same: line breaks and tabs become spaces, other control
// characters and bidirectional overrides are shown as escapes ("\u202e", untrusted.Visible);
// HTML and every character that opens Markdown syntax (emphasis,
// code, links and images, tables, math, entities) becomes a character reference, which
// Markdown and raw HTML (a <summary>) both show as the character and never as syntax; and
// a zero-width space after "@", before the "//" of "://", after "www" and after a "#"
// that precedes a letter or digit keeps GitHub from making a mention that notifies
// someone, a link, or an issue reference. No output of escape contains "<", so untrusted
// text never forms a line that equals a comment's marker.
func escape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	rs := []rune(s)
	for i, r := range rs {
		next := rune(0)
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case untrusted.Hidden(r):
			b.WriteString("&#92;" + untrusted.Escape(r)[1:])
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '_' && i > 0 && alnum(rs[i-1]) && alnum(next):
			// Within a word (server_reserved) "_" opens and closes no emphasis: kept as
			// written, so that names read the same in the source.
			b.WriteRune(r)
		case strings.ContainsRune("\\`*_~[]|$", r):
			fmt.Fprintf(&b, "&#%d;", r)
		case r == '@':
			b.WriteString("@" + zwsp)
		case r == '#' && (unicode.IsLetter(next) || unicode.IsDigit(next)):
			b.WriteString("#" + zwsp)
		case r == ':' && next == '/':
			b.WriteString(":" + zwsp)
		case (r == 'w' || r == 'W') && next == '.' && i >= 2 && strings.EqualFold(string(rs[i-2:i+1]), "www"):
			b.WriteString(string(r) + zwsp)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func alnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// zwsp is the zero-width space that breaks a mention, an autolink or an issue reference.
const zwsp = "\u200b"

// quoteLines is multi-line untrusted text as the lines of a block quote ("> "), each escaped.
func quoteLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = escape(l)
	}
	return strings.Join(lines, "\n> ")
}

// code is untrusted s as inline code on one line, safe in a table cell: a code span when s
// holds nothing that could end it or split a row (a backtick, a pipe) nor a "<" (so that no
// "<!--" of a marker or a hidden state is ever written as is), else <code> around escaped
// text (a code span shows character references as written). Line breaks become spaces; hidden
// characters are shown as escapes (untrusted.Visible).
func code(s string) string {
	s = untrusted.Visible(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, cmp.Or(s, "?")))
	if strings.ContainsAny(s, "`|<") || strings.TrimSpace(s) == "" {
		return "<code>" + escape(s) + "</code>"
	}
	return "`" + s + "`"
}
