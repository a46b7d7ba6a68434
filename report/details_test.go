package report

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
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
