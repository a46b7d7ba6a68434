package report

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
)

// TestProblems: one line per cause — a leak seen by two sources on requests 2 and 3 is one
// line, with the worst value, its limit and ratio and the cause; a crash is one line; the
// requests it kept from running are one more.
func TestProblems(t *testing.T) {
	leak := func(s reqSpec, mib float64) reqSpec { s.vram, s.leak = s.vram+mib, mib; return s }
	c := caseOf("wan", false, good, leak(goodWarm, 1200), leak(goodWarm, 2400))
	crashed := caseOf("flux", false, good, reqSpec{crash: true}, good)
	crashed.Requests[2] = checks.RequestResult{Index: 3, Of: 3, Status: checks.Skip,
		Checks: []checks.Check{checks.Skipped(checks.ServerAlive, "not sent: the server died during request 2/3")}}
	l := lane("base", c, crashed)
	var got []string
	for _, p := range problems([]checks.Result{l}) {
		got = append(got, p.line(false, ""))
	}
	want := []string{
		"❌ `wan` requests 2, 3 of 3 · **runtime peak (server_allocated) 34960 MiB** vs limit ≤ 34000 MiB (**1.03× the limit**) — memory grows +2400 MiB per request; also runtime peak (server_reserved) 1.03× the limit",
		"❌ `flux` request 2/3 · **server** — server crashed, exit 139",
		"⏭️ `flux` request 3/3 — skip: not sent: the server died during request 2/3",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestRequests(t *testing.T) {
	for _, tt := range []struct {
		reqs []int
		of   int
		want string
	}{
		{[]int{0}, 3, "case"},
		{[]int{2}, 3, "request 2/3"},
		{[]int{4, 2, 3}, 4, "requests 2–4 of 4"},
		{[]int{1, 3, 5, 6}, 6, "requests 1, 3, 5, 6 of 6"},
		{[]int{0, 1, 2, 3, 7}, 8, "case, requests 1–3, 7 of 8"},
		{nil, 3, ""},
	} {
		if got := requests(tt.reqs, tt.of); got != tt.want {
			t.Errorf("requests(%v, %d) = %q, want %q", tt.reqs, tt.of, got, tt.want)
		}
	}
}

// TestNoCheckNames: the renderers ask checks.KindOf; no check name is spelled in report's
// code (its tests may), so renaming a check cannot silently break a report.
func TestNoCheckNames(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range checks.Kinds() {
		names = append(names, k.Name)
	}
	fset := gotoken.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != gotoken.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, name := range names {
				if strings.Contains(s, name) && strings.Contains(name, ".") {
					t.Errorf("%s: the check name %q is spelled in %s; ask checks.KindOf", fset.Position(lit.Pos()), name, lit.Value)
				}
			}
			return true
		})
	}
}

// TestProblemsCarryTheTrend: with Report.Trend set, a failing check's line under Problems ends
// with what Trend says of it (the base branch's history), asked with the lane, case and the
// check the line shows; lines of requests that did not run are not asked.
func TestProblemsCarryTheTrend(t *testing.T) {
	leak := func(s reqSpec, mib float64) reqSpec { s.vram, s.leak = s.vram+mib, mib; return s }
	crashed := caseOf("flux", false, good, reqSpec{crash: true}, good)
	crashed.Requests[2] = checks.RequestResult{Index: 3, Of: 3, Status: checks.Skip,
		Checks: []checks.Check{checks.Skipped(checks.ServerAlive, "not sent: the server died during request 2/3")}}
	l := lane("base", caseOf("wan", false, good, leak(goodWarm, 1200), leak(goodWarm, 2400)), crashed)
	var asked []string
	r := &Report{Lanes: []checks.Result{l}, Trend: func(lane *checks.Result, caseID string, c checks.Check) string {
		asked = append(asked, lane.Lane+"/"+caseID+"/"+c.Name)
		if caseID != "wan" {
			return ""
		}
		return "base branch, last 10 runs: ▁▂▃"
	}}
	var b strings.Builder
	problemList(&b, r, level{})
	if !strings.Contains(b.String(), "(**1.03× the limit**) — memory grows +2400 MiB per request; also runtime peak (server_reserved) 1.03× the limit · base branch, last 10 runs: ▁▂▃\n") {
		t.Errorf("the wan line does not end with its trend:\n%s", b.String())
	}
	if strings.Count(b.String(), "last 10 runs") != 1 {
		t.Errorf("a trend on another line:\n%s", b.String())
	}
	want := []string{"base/wan/" + checks.MemoryRuntimePeak, "base/flux/" + checks.ServerAlive}
	if diff := cmp.Diff(want, asked); diff != "" {
		t.Errorf("Trend asked (-want +got):\n%s", diff)
	}
}

// TestRatioSaysWhatItIsAgainst: the factor of a problem line is value / limit and says so,
// for a limit on either side; without a value or a usable limit there is none.
func TestRatioSaysWhatItIsAgainst(t *testing.T) {
	for _, tt := range []struct {
		ck   checks.Check
		want string
	}{
		{val(checks.PerfE2E, checks.Fail, 81200, 66000, "ms"), "1.23× the limit"},
		{val(checks.ConsistencySSIM, checks.Fail, 0.728, 0.92, ""), "0.79× the limit"},
		{checks.Check{Name: checks.PerfE2E, Value: checks.Float(81200)}, ""},
		{checks.Check{Name: checks.PerfE2E, Limit: checks.Float(66000)}, ""},
		{val(checks.PerfE2E, checks.Fail, 81200, 0, "ms"), ""},
	} {
		if got := ratio(&tt.ck); got != tt.want {
			t.Errorf("ratio(%s) = %q, want %q", tt.ck.Name, got, tt.want)
		}
	}
}
