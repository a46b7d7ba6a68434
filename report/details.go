package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/untrusted"
	"github.com/diffusion-check/diffusion-check/internal/words"
	"github.com/diffusion-check/diffusion-check/results"
)

// details is a collapsed block per case that did not pass: every check that did not pass
// with value, limit, baseline and tolerance and its whole detail; multi-line details; and
// the server log tail.
func details(b *strings.Builder, lanes []results.Result, lv level) {
	shown, more := 0, 0
	for _, l := range lanes {
		for i := range l.Cases {
			c := &l.Cases[i]
			if !bad(c.Status) && c.Status != results.Flaky {
				continue
			}
			if lv.maxDetails > 0 && shown >= lv.maxDetails {
				more++
				continue
			}
			shown++
			caseDetails(b, l.Lane, len(lanes) > 1, c, lv)
		}
	}
	if more > 0 {
		fmt.Fprintf(b, "\n_%s not shown._\n", words.Plural(more, "more failing case"))
	}
}

type located struct {
	req string // "2/3", or "case"
	ck  results.Check
}

func caseDetails(b *strings.Builder, lane string, showLane bool, c *results.CaseResult, lv level) {
	nbad := 0
	for _, rr := range c.Requests {
		if bad(rr.Status) || rr.Status == results.Flaky {
			nbad++
		}
	}
	heading := "<code>" + escape(c.ID) + "</code>"
	if showLane {
		heading += " (" + escape(lane) + ")"
	}
	what := fmt.Sprintf("%d of %d requests did not pass", nbad, len(c.Requests))
	if len(c.Requests) == 0 {
		what = "no requests ran"
	}
	fmt.Fprintf(b, "\n<details><summary>%s %s: %s</summary>\n\n", icon(c.Status), heading, what)
	var fails []located
	for _, ck := range c.Checks {
		if failed(ck.Status) {
			fails = append(fails, located{"case", ck})
		}
	}
	for _, rr := range c.Requests {
		req := fmt.Sprintf("%d/%d", rr.Index, rr.Of)
		for _, ck := range rr.Checks {
			if failed(ck.Status) {
				fails = append(fails, located{req, ck})
			}
		}
		if rr.Status == results.Skip || (rr.Status == results.Cancelled && len(rr.Checks) == 0) {
			fails = append(fails, located{req, results.Check{Status: rr.Status, Detail: "not run: " + string(rr.Status) + because(rr.Checks)}})
		}
	}
	fails, hidden := capRequests(fails, lv.caseRequests)
	if len(fails) > 0 {
		shown, steps := foldSteps(fails)
		failTable(b, shown)
		if len(steps) > 0 {
			fmt.Fprintf(b, "\n<details><summary>%s, derived from the denoising stage's per-step times</summary>\n\n", words.Plural(len(steps), "step metric"))
			failTable(b, steps)
			b.WriteString("\n</details>\n")
		}
	}
	if hidden > 0 {
		fmt.Fprintf(b, "\n_%s of this case not shown here, with their details. %s_\n", words.Plural(hidden, "more failing request"), lv.elsewhere)
	}
	for _, e := range c.Errors {
		fmt.Fprintf(b, "\n- error: %s\n", escape(words.FirstLine(e)))
	}
	if lv.detailBlocks {
		for _, f := range fails {
			if _, block := splitDetail(f.ck.Detail); block != "" {
				fmt.Fprintf(b, "\n**%s · %s**\n\n", f.req, code(f.ck.Name))
				codeBlock(b, "text", block, lv.maxBlock)
			}
		}
		if len(c.LogTail) > 0 {
			b.WriteString("\n**Server log tail**\n\n")
			codeBlock(b, "text", strings.Join(c.LogTail, "\n"), lv.maxBlock)
		}
	}
	b.WriteString("\n</details>\n")
}

// capRequests keeps of fails the case's own checks and those of its first n requests that
// have any (n ≤ 0: all), and says how many requests it left out.
func capRequests(fails []located, n int) (kept []located, hidden int) {
	if n <= 0 {
		return fails, 0
	}
	var reqs []string
	for _, f := range fails {
		if f.req != "case" && !slices.Contains(reqs, f.req) {
			reqs = append(reqs, f.req)
		}
	}
	if len(reqs) <= n {
		return fails, 0
	}
	keep := reqs[:n]
	for _, f := range fails {
		if f.req == "case" || slices.Contains(keep, f.req) {
			kept = append(kept, f)
		}
	}
	return kept, len(reqs) - n
}

// foldSteps takes out of a failure block the checks derived from the denoising stage's steps
// (checks.Kind.Derived) on a request where a perf check that is not derived failed too: they
// follow from it, and go into a block of their own under the table, collapsed. Derived
// checks that failed alone stay in the table.
func foldSteps(fails []located) (shown, steps []located) {
	cause := map[string]bool{}
	for _, f := range fails {
		if k := checks.KindOf(f.ck.Name); k.Group == checks.GroupPerf && !k.Derived {
			cause[f.req] = true
		}
	}
	for _, f := range fails {
		if checks.KindOf(f.ck.Name).Derived && cause[f.req] {
			steps = append(steps, f)
		} else {
			shown = append(shown, f)
		}
	}
	return shown, steps
}

// failTable writes the checks of a failure block as an HTML table that fits GitHub's
// comment width (about 860 px): request, check, value, limit and baseline in a row that may
// wrap (only a number and its unit are kept together), and the detail on a row of its own
// under it, across the columns but the first. A Markdown table has no cell that spans
// columns; with the detail as a sixth column and every other cell unbreakable, the detail
// was a few characters wide and the table scrolled sideways. GitHub keeps table, thead,
// tbody, tr, th and td with colspan (its sanitization allowlist); each check is a tbody of
// its own, so that the striping of alternate rows pairs a check with its detail. Untrusted
// text is escaped, which makes it inert in HTML as in Markdown; the table has no blank
// line, which would end the HTML block.
func failTable(b *strings.Builder, fails []located) {
	b.WriteString("<table>\n<thead><tr><th>Req</th><th>Check</th><th>Value</th><th>Limit</th><th>Baseline</th></tr></thead>\n")
	for _, f := range fails {
		ck := f.ck
		detail, block := splitDetail(ck.Detail)
		if block != "" {
			detail = cmp.Or(detail, "see below")
		}
		if ck.Confirm != nil {
			detail = strings.TrimSuffix(ck.Confirm.Text()+"; "+detail, "; ")
		}
		val := unbroken(value(&ck))
		if sp := spreadText(&ck); sp != "" {
			val += " (" + escape(sp) + ")"
		}
		name := "—"
		if ck.Name != "" {
			name = "<code>" + escape(ck.Name) + "</code>"
			if ck.Source != "" {
				name += " " + escape(ck.Source)
			}
		}
		limit := "—"
		if l := limitText(&ck); l != "" {
			limit = unbroken(l)
		}
		fmt.Fprintf(b, "<tbody><tr><td>%s</td><td>%s %s</td><td>%s</td><td>%s</td><td>%s</td></tr>", f.req, icon(ck.Status), name, val, limit, baseline(&ck))
		if detail != "" {
			fmt.Fprintf(b, "\n<tr><td></td><td colspan=\"4\">%s</td></tr>", escape(detail))
		}
		b.WriteString("</tbody>\n")
	}
	b.WriteString("</table>\n")
}

// baseline is how a limit was derived: "60.0 s +10 %", "60.0 s +10 %, pad 20.0 ms", or "—".
func baseline(ck *results.Check) string {
	if ck.Baseline == nil {
		return "—"
	}
	k := kindOf(ck)
	s := unbroken(fmtValue(*ck.Baseline, k))
	if ck.Tolerance != nil {
		s += " " + unbroken("+"+strconv.FormatFloat(*ck.Tolerance*100, 'g', 4, 64)+" %")
	}
	if ck.Pad != nil && *ck.Pad != 0 {
		s += ", pad " + unbroken(fmtValue(*ck.Pad, k))
	}
	return s
}

// splitDetail keeps a one-line detail for a table cell; a multi-line one (a log excerpt, a
// paste-ready baseline snippet) goes into a code block under the table, its first line kept.
func splitDetail(d string) (line, block string) {
	d = strings.TrimRight(d, "\n")
	if !strings.Contains(d, "\n") {
		return d, ""
	}
	first, _, _ := strings.Cut(d, "\n")
	return first, d
}

// codeBlock writes untrusted s fenced so that no backtick run inside can close it, keeping the
// last maxLines lines (0: all) — a log's end is where the failure is. Inside a code block
// nothing is markup, but a line is still a line of the comment's source: "<!--" gets a
// zero-width space, so that no line of a log equals a comment's marker or hidden state; a
// hidden character (a bidi override, NUL, ESC) is shown as an escape (untrusted.Visible).
func codeBlock(b *strings.Builder, lang, s string, maxLines int) {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if maxLines > 0 && len(lines) > maxLines {
		cut := len(lines) - maxLines
		lines = append([]string{fmt.Sprintf("… %d earlier lines left out", cut)}, lines[cut:]...)
	}
	body := strings.ReplaceAll(untrusted.Visible(strings.Join(lines, "\n")), "<!--", "<!"+zwsp+"--")
	fence := "```"
	for strings.Contains(body, fence) {
		fence += "`"
	}
	b.WriteString(fence + lang + "\n" + body + "\n" + fence + "\n")
}

// notes lists possible improvements and other remarks (Check.Note) and the multi-line details
// of checks that are not in a failure block, such as paste-ready baseline snippets for missing
// scenarios. A remark that several checks of a request share (the ground-truth file of every
// consistency check) is one line naming them all, and requests of a case with the same line
// share it: "`t2i` requests 1/2, 2/2 · `consistency.ssim`, `consistency.psnr`: ground truth: …".
func notes(b *strings.Builder, lanes []results.Result, lv level) {
	type line struct {
		caseID, text string
		reqs, names  []string
	}
	type block struct{ where, name, text string }
	var lines []*line
	var blocks []block
	shared := map[string]*line{} // a request's line by case, remark and check names
	for _, l := range lanes {
		for _, c := range l.Cases {
			failingCase := bad(c.Status)
			collect := func(req string, cks []results.Check) {
				var mine []*line // this request's lines, one per remark, in the order first seen
				for _, ck := range cks {
					if ck.Note != "" {
						i := slices.IndexFunc(mine, func(n *line) bool { return n.text == ck.Note })
						if i < 0 {
							mine, i = append(mine, &line{caseID: c.ID, text: ck.Note, reqs: []string{req}}), len(mine)
						}
						mine[i].names = append(mine[i].names, ck.Name)
					}
					if _, bl := splitDetail(ck.Detail); bl != "" && !(failingCase && failed(ck.Status)) {
						where := code(c.ID)
						if req != "" {
							where += " request " + req
						}
						blocks = append(blocks, block{where: where, name: ck.Name, text: bl})
					}
				}
				for _, n := range mine {
					key := n.caseID + "\x00" + n.text + "\x00" + strings.Join(n.names, "\x00")
					if o := shared[key]; o != nil && req != "" {
						o.reqs = append(o.reqs, req)
						continue
					}
					if req != "" { // a case-level remark is its own line
						shared[key] = n
					}
					lines = append(lines, n)
				}
			}
			collect("", c.Checks)
			for _, rr := range c.Requests {
				collect(fmt.Sprintf("%d/%d", rr.Index, rr.Of), rr.Checks)
			}
		}
	}
	if len(lines)+len(blocks) == 0 {
		return
	}
	b.WriteString("\n<details><summary>Notes, possible improvements and baseline snippets (" + strconv.Itoa(len(lines)+len(blocks)) + ")</summary>\n\n")
	for _, n := range lines {
		where := code(n.caseID)
		switch {
		case len(n.reqs) > 1:
			where += " requests " + strings.Join(n.reqs, ", ")
		case n.reqs[0] != "":
			where += " request " + n.reqs[0]
		}
		names := make([]string, len(n.names))
		for i, name := range n.names {
			names[i] = code(name)
		}
		fmt.Fprintf(b, "- %s · %s: %s\n", where, strings.Join(names, ", "), escape(n.text))
	}
	for _, bl := range blocks {
		fmt.Fprintf(b, "\n%s · %s\n\n", bl.where, code(bl.name))
		codeBlock(b, "text", bl.text, lv.maxBlock)
	}
	b.WriteString("\n</details>\n")
}
