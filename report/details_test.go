package report

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// TestFailureTablesFitTheCommentWidth: the failure blocks' tables may wrap at GitHub's
// comment width — no cell keeps more than a number with its unit (or "≤ 36000 MiB") on one
// line — and every check's detail is a row of its own under it, spanning the four columns
// after the request, in the tbody of its check. The 860 px rendering itself is
// docs/screenshots/comment-failing-open.png (docs/report-screenshots.sh).
func TestFailureTablesFitTheCommentWidth(t *testing.T) {
	md := Comment(failingReport())
	tables := regexp.MustCompile(`(?s)<table>\n<thead><tr><th>Req</th><th>Check</th><th>Value</th><th>Limit</th><th>Baseline</th></tr></thead>\n(.*?)</table>`).
		FindAllStringSubmatch(md, -1)
	if len(tables) < 4 {
		t.Fatalf("%d failure tables, want one per failing case and the folded step metrics", len(tables))
	}
	cell := regexp.MustCompile(`<td[^>]*>(.*?)</td>`)
	details := 0
	for _, tbl := range tables {
		for _, body := range strings.SplitAfter(strings.TrimSpace(tbl[1]), "</tbody>") {
			if body = strings.TrimSpace(body); body == "" {
				continue
			}
			if !strings.HasPrefix(body, "<tbody><tr>") {
				t.Errorf("not a tbody per check: %q", body)
				continue
			}
			rows := strings.Split(body, "\n")
			if n := len(cell.FindAllString(rows[0], -1)); n != 5 {
				t.Errorf("%d cells in a check's row, want 5: %q", n, rows[0])
			}
			switch len(rows) {
			case 1:
			case 2:
				details++
				if !strings.HasPrefix(rows[1], `<tr><td></td><td colspan="4">`) {
					t.Errorf("the detail is not a row of its own across the columns: %q", rows[1])
				}
			default:
				t.Errorf("%d rows for one check, want the check and its detail: %q", len(rows), body)
			}
			for _, c := range cell.FindAllStringSubmatch(body, -1) {
				for _, run := range strings.Fields(strings.ReplaceAll(c[1], nbsp, "\x00")) {
					if strings.Contains(run, "\x00") && utf8.RuneCountInString(run) > 12 {
						t.Errorf("cell keeps %q on one line", strings.ReplaceAll(run, "\x00", " "))
					}
				}
			}
		}
	}
	if details == 0 {
		t.Error("no detail row at all")
	}
}

// TestNotesShareALine: a remark that several checks of a request carry (the ground-truth file of
// every consistency check) is one line naming them, and requests of a case with the same line
// share it; a request whose checks differ keeps its own line.
func TestNotesShareALine(t *testing.T) {
	gt := "ground truth: sglang_generated/h100/t2i_1gpu.png (made by SGLang)"
	cons := func(names ...string) []results.Check {
		var cs []results.Check
		for _, n := range names {
			cs = append(cs, results.Check{Name: n, Status: results.Pass, Note: gt})
		}
		return cs
	}
	lanes := []results.Result{{Cases: []results.CaseResult{{ID: "t2i", Status: results.Pass, Requests: []results.RequestResult{
		{Index: 1, Of: 3, Checks: cons(checks.ConsistencySSIM, checks.ConsistencyPSNR)},
		{Index: 2, Of: 3, Checks: append(cons(checks.ConsistencySSIM, checks.ConsistencyPSNR),
			results.Check{Name: checks.PerfE2E, Status: results.Pass, Note: "possible improvement"})},
		{Index: 3, Of: 3, Checks: cons(checks.ConsistencySSIM)},
	}}}}}
	var b strings.Builder
	notes(&b, lanes, level{})
	want := "\n<details><summary>Notes, possible improvements and baseline snippets (3)</summary>\n\n" +
		"- `t2i` requests 1/3, 2/3 · `consistency.ssim`, `consistency.psnr`: " + gt + "\n" +
		"- `t2i` request 2/3 · `perf.e2e`: possible improvement\n" +
		"- `t2i` request 3/3 · `consistency.ssim`: " + gt + "\n" +
		"\n</details>\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}
