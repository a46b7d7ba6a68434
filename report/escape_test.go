package report

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/untrusted"
	"github.com/diffusion-check/diffusion-check/results"
)

// hostile is text a pull request can put into a results file: HTML, an image, a link, a
// mention, an issue reference, a backtick that would end a code span, a pipe that would end
// a table cell, a marker, and workflow commands.
const hostile = "<img src=x onerror=alert(1)> ![i](https://evil.example/x.png) [click](https://evil.example) " +
	"@octocat #1 https://evil.example www.evil.example `x` a|b <!-- diffusion-check:base --> $x$ *b* _i_ ~s~ \\ &amp; ::error::pwned"

// hostileReport is a failing report whose every untrusted field holds hostile text.
func hostileReport() *Report {
	c := caseOf("t2i", false, good, good)
	c.Requests[1].Status = results.Fail
	c.Requests[1].Checks = append(c.Requests[1].Checks, results.Check{
		Name: "perf.e2e`|<b>", Status: results.Fail, Value: checks.Float(2), Limit: checks.Float(1), Unit: "ms`|",
		Source: hostile, Detail: hostile + "\n" + Marker("base") + "\n```\n# heading\n" + hostile,
		Known: &results.KnownFailure{Reason: hostile, Until: hostile, State: results.KnownStateExpired, Entry: hostile,
			Link: "https://x.example/a) ![i](https://evil.example/x.png"},
	})
	c.Errors = []string{hostile + "\n" + Marker("base")}
	c.LogTail = []string{Marker("base"), "```", hostile, "~~~", "<!-- diffusion-check-state:e30= -->"}
	l := lane("base", c)
	l.Errors = []string{hostile + "\n" + Marker("base")}
	l.GPU = hostile
	l.Deselected = []results.Deselected{{Case: "x`y", Lane: hostile, Reason: hostile}}
	return &Report{Key: "default", Lanes: []results.Result{l, lane("other`<img>@team", caseOf("b`c|d", false, good))}}
}

// TestUntrustedTextIsInert: hostile text in every field of a results file renders as text:
// no HTML, image, link, mention or issue reference of its own, no code span or table cell
// it ends, and no line that equals a marker or a hidden state, in the comment and the summary.
func TestUntrustedTextIsInert(t *testing.T) {
	r := hostileReport()
	for name, md := range map[string]string{"comment": Comment(r), "summary": Summary(r)} {
		prose := outsideCodeBlocks(t, md)
		for _, bad := range []string{"<img", "<b>", "![i](", "[click](", "@octocat", "@team", "#1 ", "https://evil", "www.evil", "a|b", "`x`", "x`y",
			"b`c", "$x$", "*b*", "_i_", "~s~"} {
			if strings.Contains(prose, bad) {
				t.Errorf("%s holds %q outside a code block:\n%s", name, bad, around(prose, bad))
			}
		}
		marker := regexp.MustCompile(`^\s*<!--\s*diffusion-check`)
		for i, line := range strings.Split(md, "\n") {
			if marker.MatchString(line) && !(name == "comment" && i < 2) {
				t.Errorf("%s line %d looks like a marker or state: %q", name, i+1, line)
			}
		}
		// A log line of backticks cannot end the block it is in.
		if !strings.Contains(md, "````text\n") {
			t.Errorf("%s: the log block's fence is not longer than the backtick run inside it", name)
		}
	}
	if first, _, _ := strings.Cut(Comment(r), "\n"); first != Marker("default") {
		t.Errorf("first line %q, want the marker", first)
	}
}

// TestEscapeKeepsPlainTextAsWritten: names and ordinary text read the same in the source.
func TestEscapeKeepsPlainTextAsWritten(t *testing.T) {
	for _, s := range []string{"server_reserved", "wan2.2-t2v", "no changed path matches", "3.1 s (1.24×)"} {
		if got := escape(s); got != s {
			t.Errorf("escape(%q) = %q", s, got)
		}
	}
	if got := code("t2i"); got != "`t2i`" {
		t.Errorf("code(t2i) = %q", got)
	}
	if got := code("a`b|c"); got != "<code>a&#96;b&#124;c</code>" {
		t.Errorf("code(a`b|c) = %q", got)
	}
}

// outsideCodeBlocks is md without its fenced code blocks (where nothing is markup), failing
// the test for a block that is never closed: text after it would be swallowed.
func outsideCodeBlocks(t *testing.T, md string) string {
	t.Helper()
	var out []string
	fence := ""
	for _, line := range strings.Split(md, "\n") {
		switch {
		case fence == "" && strings.HasPrefix(line, "```"):
			fence = line[:len(line)-len(strings.TrimLeft(line, "`"))]
		case fence != "" && line == fence:
			fence = ""
		case fence == "":
			out = append(out, line)
		}
	}
	if fence != "" {
		t.Errorf("a code block fenced with %s is never closed", fence)
	}
	return strings.Join(out, "\n")
}

func around(s, sub string) string {
	i := strings.Index(s, sub)
	return s[max(0, i-80):min(len(s), i+len(sub)+80)]
}

// TestHiddenCharactersShownAsEscapes: a server message with a bidi override (the trial's
// "deploy \u202eDEXIF\u202c ok", which displays as "deploy FIXED ok"), isolates, NUL, ESC and
// U+2028 reaches no reader as such, in the comment, the summary (outside and inside code
// blocks), the check run's summary and annotations, and the log's annotations: each is shown
// as an escape.
func TestHiddenCharactersShownAsEscapes(t *testing.T) {
	const msg = "deploy \u202eDEXIF\u202c ok \u2066iso\u2069 nul\x00 esc\x1b[31m ls\u2028x"
	c := caseOf("t2i", false, good, good)
	c.Requests[1].Status = results.Fail
	c.Requests[1].Checks = append(c.Requests[1].Checks, results.Check{Name: "output.present", Status: results.Fail, Detail: msg + "\n" + msg})
	c.Errors = []string{msg}
	c.LogTail = []string{msg}
	r := &Report{Key: "default", Lanes: []results.Result{lane("base", c)}}
	texts := map[string]string{"comment": Comment(r), "summary": Summary(r)}
	for i, a := range Annotations(r.Lanes, 10) {
		texts[fmt.Sprintf("annotation %d", i)] = a.Title + "\n" + a.Message
	}
	run := LaneCheckRun(r, r.Lanes[0], "suite.yaml", map[string]int{"t2i": 3})
	texts["check-run summary"] = run.Summary
	if len(run.Annotations) == 0 {
		t.Fatal("no check-run annotations")
	}
	for i, a := range run.Annotations {
		texts[fmt.Sprintf("check-run annotation %d", i)] = a.Title + "\n" + a.Message
	}
	for name, text := range texts {
		for _, r := range text {
			if untrusted.Hidden(r) {
				t.Errorf("%s holds %U as is", name, r)
			}
		}
		if !strings.Contains(text, `\u202eDEXIF\u202c`) && !strings.Contains(text, `&#92;u202eDEXIF&#92;u202c`) {
			t.Errorf("%s does not show the override as an escape:\n%s", name, text)
		}
	}
}
