package report

import (
	"bytes"
	"encoding/xml"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/diffusion-check/diffusion-check/internal/golden"
	"github.com/diffusion-check/diffusion-check/results"

	"github.com/google/go-cmp/cmp"
)

var reports = []struct {
	name string
	r    func() *Report
	want results.Status
}{
	{"pass", passingReport, results.Pass},
	{"fail", failingReport, results.Fail},
	{"known", knownReport, results.Fail},
	{"mixed", mixedReport, results.Fail},
	{"selected", selectedReport, results.Pass},
}

func TestGolden(t *testing.T) {
	for _, tt := range reports {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r()
			if got := worstStatus(r.Lanes); got != tt.want {
				t.Fatalf("fixture: status %s, want %s", got, tt.want)
			}
			c := Comment(r)
			wellFormed(t, c)
			golden.Check(t, "comment-"+tt.name+".md", []byte(c))
			s := Summary(r)
			wellFormed(t, s)
			golden.Check(t, "summary-"+tt.name+".md", []byte(s))
			var b bytes.Buffer
			if err := JUnit(&b, r.Lanes, "", nil); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "junit-"+tt.name+".xml", b.Bytes())
		})
	}
}

// TestHuge: 500 cases, 1000 requests, 50 failing cases with 200-line logs: the comment stays
// under GitHub's limit, well formed, still names every failing request it can and says it
// was trimmed; the summary keeps everything.
func TestHuge(t *testing.T) {
	r := hugeReport(500)
	c := Comment(r)
	if len(c) >= commentLimit || utf8.RuneCountInString(c) >= commentLimit {
		t.Fatalf("comment is %d bytes, limit %d", len(c), commentLimit)
	}
	wellFormed(t, c)
	if !strings.Contains(c, "Trimmed to fit") || !strings.Contains(c, "https://github.com/o/r/actions/runs/99#summary") {
		t.Error("trimmed comment does not say so, or does not link the full report")
	}
	if ParseState(c) == nil {
		t.Error("trimmed comment lost its state")
	}
	golden.Check(t, "comment-huge.md", []byte(c))
	s := Summary(r)
	if len(s) >= summaryLimit {
		t.Fatalf("summary is %d bytes, limit %d", len(s), summaryLimit)
	}
	wellFormed(t, s)
	if strings.Contains(s, "Trimmed") {
		t.Error("the summary of 500 cases was trimmed; it should fit unabridged")
	}
	if n := strings.Count(s, "| ✅\u00a0"); n != 950 {
		t.Errorf("summary has %d passing request rows, want 950", n)
	}
}

// TestDegrade: every level renders well-formed Markdown, and each is no longer than the one
// before, so the loop in markdown ends on the most complete rendering that fits.
func TestDegrade(t *testing.T) {
	r := hugeReport(120)
	prev := -1
	for i, lv := range levels {
		s := render(r, lv, "x")
		wellFormed(t, s)
		if prev >= 0 && len(s) > prev {
			t.Errorf("level %d (%s) is %d bytes, longer than level %d (%d bytes)", i, lv.trimmed, len(s), i-1, prev)
		}
		prev = len(s)
	}
	for _, limit := range []int{200000, 60000, 20000, 8000, 3000} {
		s := renderMarkdown(r, limit)
		if len(s) >= limit {
			t.Errorf("renderMarkdown(limit %d) is %d bytes", limit, len(s))
		}
	}
}

// wellFormed checks what a cut would break: every <details> closed, every code fence
// closed, every table row with the columns of its header.
func wellFormed(t *testing.T, md string) {
	t.Helper()
	if o, c := strings.Count(md, "<details>"), strings.Count(md, "</details>"); o != c {
		t.Errorf("%d <details> but %d </details>", o, c)
	}
	// An HTML table is one HTML block: a blank line inside would end it, and Markdown would
	// show the rest as text.
	for rest := md; ; {
		i := strings.Index(rest, "<table>")
		if i < 0 {
			break
		}
		j := strings.Index(rest[i:], "</table>")
		if j < 0 {
			t.Errorf("<table> not closed: %q", clip(rest[i:], 200))
			break
		}
		if tbl := rest[i : i+j]; strings.Contains(tbl, "\n\n") {
			t.Errorf("blank line inside an HTML table: %q", clip(tbl, 200))
		}
		rest = rest[i+j:]
	}
	lines := strings.Split(md, "\n")
	fence := ""
	cols := 0
	for i, l := range lines {
		if fence != "" {
			if l == fence {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(l, "```") {
			fence = strings.TrimRight(l, "abcdefghijklmnopqrstuvwxyz")
			continue
		}
		if !strings.HasPrefix(l, "|") {
			cols = 0
			continue
		}
		n := strings.Count(strings.ReplaceAll(l, `\|`, ""), "|")
		if cols == 0 {
			cols = n
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "|---") {
				t.Errorf("line %d: table header without a separator: %q", i+1, l)
			}
		} else if n != cols {
			t.Errorf("line %d: %d cells, header has %d: %q", i+1, n-1, cols-1, l)
		}
	}
	if fence != "" {
		t.Errorf("code fence %s not closed", fence)
	}
}

func TestState(t *testing.T) {
	r := mixedReport()
	c := Comment(r)
	got := ParseState(c)
	want := &State{
		V: stateVersion,
		Lanes: []LaneState{
			{Name: "base", Status: results.Fail, RunURL: r.RunURL, RunLabel: r.RunLabel},
			{Name: "extra", Status: results.Pass, RunURL: r.RunURL, RunLabel: r.RunLabel},
			{Name: "nightly", Status: results.Fail, RunURL: "https://github.com/o/r/actions/runs/60", RunLabel: "run #60"},
		},
		Failing: slices.Sorted(
			slices.Values(
				stateKeys([]string{"base/flux_crash/2", "base/hunyuan_t2v", "base/qwen_image_t2i/2", "base/wan_t2v_audio/1", "base/wan_t2v_audio/2"})),
		),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	for _, s := range []string{"Since the previous run: **4 newly failing**", "**2 fixed** (`qwen_image_t2i` request 1)", "**amd** ⏳ running",
		"**nightly** ❌ [run #\u200b60]"} {
		if !strings.Contains(c, s) {
			t.Errorf("comment does not say %q", s)
		}
	}
	if !strings.HasPrefix(c, Marker("base")+"\n") {
		t.Error("comment does not start with its marker")
	}
	for _, body := range []string{"", "hello", statePrefix + "!!! -->", statePrefix + "bm90IGpzb24= -->"} {
		if s := ParseState(body); s != nil {
			t.Errorf("ParseState(%q) = %+v, want nil", body, s)
		}
	}
}

func FuzzParseState(f *testing.F) {
	f.Add(Comment(mixedReport()))
	f.Add(statePrefix + "e30= -->")
	f.Add("<!-- diffusion-check-state:eyJsYW5lcyI6bnVsbH0= -->")
	f.Fuzz(func(t *testing.T, body string) {
		s := ParseState(body)
		if s == nil {
			return
		}
		// What parses re-encodes to a state that parses to the same.
		again := ParseState(s.encode())
		if diff := cmp.Diff(s, again); diff != "" {
			t.Errorf("state does not round-trip (-first +second):\n%s", diff)
		}
	})
}

func TestJUnitParses(t *testing.T) {
	var b bytes.Buffer
	r := failingReport()
	if err := JUnit(&b, r.Lanes, "", nil); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	n := count(r.Lanes)
	// One test per request, one per case without requests (hunyuan_t2v).
	if doc.Tests != n.requests+1 || doc.Failures != n.failed+1 {
		t.Errorf("tests %d failures %d, want %d and %d", doc.Tests, doc.Failures, n.requests+1, n.failed+1)
	}
}

func TestAnnotations(t *testing.T) {
	r := hugeReport(500)
	as := Annotations(r.Lanes, 10)
	if len(as) != 10 {
		t.Fatalf("%d annotations, want 10", len(as))
	}
	if want := "diffusion-check: 41 more problems"; as[9].Title != want {
		t.Errorf("last annotation %q, want %q", as[9].Title, want)
	}
	all := Annotations(failingReport().Lanes, 0)
	var titles []string
	for _, a := range all {
		titles = append(titles, a.Title)
	}
	want := []string{
		"diffusion-check: case qwen_image_t2i request 2/2 fail",
		"diffusion-check: case wan_t2v_audio request 1/2 fail",
		"diffusion-check: case wan_t2v_audio request 2/2 fail",
		"diffusion-check: case flux_crash request 2/2 fail",
		"diffusion-check: case hunyuan_t2v fail",
	}
	if diff := cmp.Diff(want, titles); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if !strings.Contains(all[2].Message, "perf.e2e = 81200 ms, limit 66000 ms") {
		t.Errorf("annotation message %q does not give value and limit", all[2].Message)
	}
}

func BenchmarkCommentHuge(b *testing.B) {
	r := hugeReport(500)
	for b.Loop() {
		Comment(r)
	}
}
