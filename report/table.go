package report

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/results"
)

// maxStages is how many stages the STAGES column shows: the slowest ones, in pipeline order.
// A real pipeline reports half a dozen stages and most of them take no time to speak of.
const maxStages = 3

// Table writes the per-request table of r to w: one row per request (or per case that ran
// no request), then one line per failed, errored or known check and per other reason a case
// did not pass, then a summary line. Both E2E times are shown and named: the client's (from
// sending the request to having the output) and the server's (its perf record's
// total_duration_ms, which the baselines limit). It prints the statuses stored in r; call
// judge.Settle first for a result rebuilt without statuses.
func Table(w io.Writer, r *results.Result) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	client := rightColumn(r, "E2E CLIENT ms", func(rr *results.RequestResult) float64 { return rr.E2EMs })
	server := rightColumn(r, "SERVER ms", func(rr *results.RequestResult) float64 { return rr.ServerTotalMs })
	fmt.Fprintf(tw, "CASE\tREQ\tSTATUS\t%s\t%s\tSTAGES ms\tOUTPUT\n", client(nil), server(nil))
	for _, c := range r.Cases {
		if len(c.Requests) == 0 {
			fmt.Fprintf(tw, "%s\t-\t%s\t%s\t%s\t-\t-\n", c.ID, c.Status, client(&results.RequestResult{}), server(&results.RequestResult{}))
			continue
		}
		for i := range c.Requests {
			rr := &c.Requests[i]
			fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\n", c.ID, rr.Index, rr.Of, rr.Status, client(rr), server(rr), stages(rr.Stages), output(rr.Output))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	tableProblems(&b, r)
	acrossLines(&b, r)
	summary(&b, r)
	_, err := w.Write(b.Bytes())
	return err
}

// rightColumn returns a formatter that right-aligns one column of times in ms, which
// tabwriter (left aligned for the other columns) cannot do for one column alone; nil gives
// the header.
func rightColumn(r *results.Result, head string, ms func(*results.RequestResult) float64) func(*results.RequestResult) string {
	text := func(rr *results.RequestResult) string {
		if v := ms(rr); v > 0 {
			return strconv.FormatFloat(v, 'f', 1, 64)
		}
		return "-"
	}
	width := len(head)
	for _, c := range r.Cases {
		for i := range c.Requests {
			width = max(width, len(text(&c.Requests[i])))
		}
	}
	return func(rr *results.RequestResult) string {
		if rr == nil {
			return fmt.Sprintf("%*s", width, head)
		}
		return fmt.Sprintf("%*s", width, text(rr))
	}
}

// stages shows the slowest maxStages stages in pipeline order, names without their "Stage"
// suffix, and how many others there were.
func stages(s results.Stages) string {
	if len(s) == 0 {
		return "-"
	}
	shown := s
	if len(s) > maxStages {
		idx := make([]int, len(s))
		for i := range idx {
			idx[i] = i
		}
		// Stable, so that equal times keep the earlier stage.
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(s[b].Ms, s[a].Ms) })
		idx = idx[:maxStages]
		slices.Sort(idx)
		shown = nil
		for _, i := range idx {
			shown = append(shown, s[i])
		}
	}
	parts := make([]string, len(shown))
	for i, st := range shown {
		name := strings.TrimSuffix(st.Name, "Stage")
		if name == "" {
			name = st.Name
		}
		parts[i] = name + " " + strconv.FormatFloat(st.Ms, 'f', 1, 64)
	}
	out := strings.Join(parts, " · ")
	if n := len(s) - len(shown); n > 0 {
		out += fmt.Sprintf(" (+%d)", n)
	}
	return out
}

// output reads like "png 256x256 12.3 KiB" or "mp4 256x256 16f 8fps +aac 45.1 KiB".
func output(o *results.Output) string {
	if o == nil {
		return "-"
	}
	parts := []string{cmp.Or(o.Format, o.Kind, "?")}
	if o.Width > 0 || o.Height > 0 {
		parts = append(parts, fmt.Sprintf("%dx%d", o.Width, o.Height))
	}
	if o.Frames > 0 {
		parts = append(parts, fmt.Sprintf("%df", o.Frames))
	}
	if o.FPS > 0 {
		parts = append(parts, strconv.FormatFloat(o.FPS, 'g', 4, 64)+"fps")
	}
	if o.Audio != nil {
		parts = append(parts, "+"+cmp.Or(o.Audio.Codec, "audio"))
	}
	parts = append(parts, size(o.Bytes))
	return strings.Join(parts, " ")
}

func size(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v := float64(n)
	for _, unit := range []string{"KiB", "MiB", "GiB"} {
		v /= 1024
		if v < 1024 || unit == "GiB" {
			return fmt.Sprintf("%.1f %s", v, unit)
		}
	}
	panic("unreachable")
}

// tableProblems writes one line per check that did not pass (failed, errored or known), case-level
// checks first, and a line for each other reason a request or case did not pass, so nothing
// red in the table is left unexplained.
func tableProblems(b *bytes.Buffer, r *results.Result) {
	var lines []string
	add := func(where, what string) { lines = append(lines, where+": "+indent(what)) }
	for _, e := range r.Errors {
		add("run", e)
	}
	for _, c := range r.Cases {
		where := "case " + c.ID
		caseExplained := false
		for _, ck := range c.Checks {
			if s := checkLine(ck); s != "" {
				add(where, s)
				caseExplained = true
			}
		}
		for _, e := range c.Errors {
			add(where, e)
			caseExplained = true
		}
		if len(c.Requests) == 0 && !caseExplained {
			if c.Status == results.Cancelled {
				add(where, "cancelled before its first request")
			} else {
				add(where, "no requests ran")
			}
		}
		for _, rr := range c.Requests {
			where := fmt.Sprintf("case %s request %d/%d", c.ID, rr.Index, rr.Of)
			explained := false
			for _, ck := range rr.Checks {
				if s := checkLine(ck); s != "" {
					add(where, s)
					explained = true
				}
			}
			if explained {
				continue
			}
			switch {
			case rr.Status == results.Cancelled:
				add(where, "cancelled"+because(rr.Checks))
			case len(rr.Checks) == 0 && rr.Status != results.Pass:
				add(where, "no checks ran")
			case rr.Status == results.Skip:
				add(where, "skipped"+because(rr.Checks)+"; every request of a case is required")
			}
		}
	}
	if len(lines) > 0 {
		b.WriteByte('\n')
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
}

// because is ": <detail>" of the first check that says why a request did not run, or "".
func because(cs []results.Check) string {
	for _, ck := range cs {
		if ck.Detail != "" {
			return ": " + ck.Detail
		}
	}
	return ""
}

// checkLine is "name: detail" for a check that did not pass, with its value and limit when it
// has them, or "" for a check that passed or was skipped.
func checkLine(ck results.Check) string {
	var s strings.Builder
	s.WriteString(ck.Name)
	switch ck.Status {
	case results.Pass, results.Skip:
		return ""
	case results.Fail:
	case results.Known:
		s.WriteString(" (known)")
	case results.Flaky:
		s.WriteString(" (flaky)")
	default:
		s.WriteString(" (" + cmp.Or(string(ck.Status), "no status") + ")")
	}
	if ck.Value != nil {
		s.WriteString(" = " + number(*ck.Value, ck.Unit))
		if ck.Limit != nil {
			s.WriteString(", limit " + number(*ck.Limit, ck.Unit))
		}
	}
	s.WriteString(": " + cmp.Or(strings.TrimRight(ck.Detail, "\n"), "(no detail)"))
	if ck.Confirm != nil {
		s.WriteString(" [" + ck.Confirm.Text() + "]")
	}
	return s.String()
}

func number(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'g', 6, 64)
	if unit != "" {
		s += " " + unit
	}
	return s
}

// indent keeps a multi-line detail (a log tail, a stack) under its line.
func indent(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

func summary(b *bytes.Buffer, r *results.Result) {
	n := results.TallyRequests(*r)
	total := n.Total()
	fmt.Fprintf(b, "\n%s, %s: %d passed, %d failed, %d known, %d skipped",
		words.Plural(len(r.Cases), "case"), words.Plural(total, "request"), n[results.Pass], n[results.Fail], n[results.Known], n[results.Skip])
	if k := n[results.Error]; k > 0 {
		fmt.Fprintf(b, ", %d errored", k)
	}
	if k := n[results.Cancelled]; k > 0 {
		fmt.Fprintf(b, ", %d cancelled", k)
	}
	if k := n[results.Flaky]; k > 0 {
		fmt.Fprintf(b, ", %d flaky", k)
	}
	if k := total - n[results.Pass] - n[results.Fail] - n[results.Known] - n[results.Skip] - n[results.Error] - n[results.Cancelled] - n[results.Flaky]; k > 0 {
		fmt.Fprintf(b, ", %d without a status", k)
	}
	if k := len(r.Deselected); k > 0 {
		fmt.Fprintf(b, "; %s left out by test-impact selection", words.Plural(k, "case"))
	}
	fmt.Fprintf(b, " — %s\n", strings.ToUpper(cmp.Or(string(r.Status), "no status")))
}
