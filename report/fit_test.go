package report

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/diffusion-check/diffusion-check/results"
)

// longIDCases are n failing cases whose ids are 100 characters long (the longest a name may
// be), each of reqs requests that all fail (E2E over its limit, SSIM drifting).
func longIDCases(prefix string, n, reqs int) []results.CaseResult {
	var cases []results.CaseResult
	for i := range n {
		id := fmt.Sprintf("%s_%04d_", prefix, i)
		id += strings.Repeat("x", 100-len(id))
		var specs []reqSpec
		for k := range reqs {
			bad := goodWarm
			bad.e2e, bad.ssim = 70500+float64(k), 0.81
			specs = append(specs, bad)
		}
		cases = append(cases, caseOf(id, false, specs...))
	}
	return cases
}

// othersReport is one failing lane of this run beside n other lanes, with 100-character
// names, that GitHub's statuses say failed.
func othersReport(n int) *Report {
	r := runReport(lane("base", longIDCases("c", 1, 1)...))
	r.Others = []Status{}
	for i := range n {
		r.Others = append(r.Others, Status{Lane: fmt.Sprintf("lane%04d", i) + strings.Repeat("y", 92), State: "failure", TargetURL: r.RunURL})
	}
	return r
}

func runReport(lanes ...results.Result) *Report {
	return &Report{Key: "base", RunURL: "https://github.com/o/r/actions/runs/99", RunLabel: "run #99",
		FullURL: "https://github.com/o/r/actions/runs/99", ArtifactsURL: "https://github.com/o/r/actions/runs/99#artifacts", Lanes: lanes}
}

// TestCommentAndCheckRunAlwaysFit: whatever the ids, the number of
// requests, lanes or errors, the comment stays under GitHub's 65,536 characters with its
// state, and every lane's check run summary under 65,535; trimming goes down to the verdict
// alone when nothing else fits. (The audit: 300 failing cases with 100-character ids gave a
// 605,373-character comment and a 65,881-character summary, both refused.)
func TestCommentAndCheckRunAlwaysFit(t *testing.T) {
	manyLanes := func(n int) []results.Result {
		var out []results.Result
		for i := range n {
			name := fmt.Sprintf("lane%04d", i) + strings.Repeat("y", 92)
			out = append(out, lane(name, longIDCases("c", 1, 1)...))
		}
		return out
	}
	errLane := lane("base", longIDCases("e", 3, 1)...)
	for i := range 3000 {
		errLane.Errors = append(errLane.Errors,
			fmt.Sprintf("partition %d/3000 of plan 0123456789abcdef never reported: its cases %s did not run", i, strings.Repeat("z", 100)))
	}
	for _, tc := range []struct {
		name string
		r    *Report
		want string // a line the comment must hold
	}{
		{"300 failing cases, 100-character ids", runReport(lane("base", longIDCases("case", 300, 1)...)), "## ❌ diffusion-check: 300 of 300 requests failed"},
		{"10,000 failing requests", runReport(lane("base", longIDCases("case", 100, 100)...)), "## ❌ diffusion-check: 10000 of 10000 requests failed"},
		{"3,000 lane errors", runReport(errLane), "Too much to show within GitHub's size limit: only the verdict."},
		{"800 lanes with 100-character names", runReport(manyLanes(800)...), "## ❌ diffusion-check: failed\n\n> [!NOTE]\n> Too much to show"},
		{"800 other lanes' statuses with 100-character names", othersReport(800), "## ❌ diffusion-check: failed\n\n> [!NOTE]\n> Too much to show"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Comment(tc.r)
			if n := utf8.RuneCountInString(c); n >= commentLimit || len(c) >= commentLimit {
				t.Errorf("comment of %d characters (%d bytes), GitHub's limit is %d", n, len(c), commentLimit)
			}
			wellFormed(t, c)
			if ParseState(c) == nil {
				t.Error("the comment lost its state")
			}
			if !strings.Contains(c, tc.want) {
				t.Errorf("comment lacks %q:\n%.800s", tc.want, c)
			}
			for i, l := range tc.r.Lanes {
				if i == 3 {
					break
				}
				s := LaneCheckRun(tc.r, l, "", nil).Summary
				if n := utf8.RuneCountInString(s); n >= maxCheckSummary {
					t.Errorf("lane %s: check run summary of %d characters, GitHub's limit is %d", l.Lane, n, maxCheckSummary)
				}
				wellFormed(t, s)
			}
		})
	}
}

// TestStateHasItsOwnBudget: the hidden state stays within maxStateBytes whatever the ids and
// the number of failures; it keeps every key of 300 failing requests with 100-character ids
// (compact keys), and cuts 10,000 of them, saying so.
func TestStateHasItsOwnBudget(t *testing.T) {
	for _, tc := range []struct {
		name      string
		r         *Report
		truncated bool
	}{
		{"300 × 100-character ids", runReport(lane("base", longIDCases("case", 300, 1)...)), false},
		{"10,000 requests", runReport(lane("base", longIDCases("case", 100, 100)...)), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.r.State()
			if n := len(st.encode()); n > maxStateBytes {
				t.Errorf("state line of %d bytes, budget %d", n, maxStateBytes)
			}
			if st.Truncated != tc.truncated {
				t.Errorf("truncated %v, want %v (%d keys)", st.Truncated, tc.truncated, len(st.Failing))
			}
			got := ParseState(Comment(tc.r))
			if got == nil || len(got.Failing) != len(st.Failing) {
				t.Errorf("the comment's state does not round-trip")
			}
		})
	}
}

// TestOneNoisyCaseLeavesTheOthersDetails: a case whose 55 requests all
// fail, each with a long multi-line detail, shows its first failing requests in full and
// counts the rest; the other failing cases keep their details blocks in the comment. (The
// audit: that case's block alone was 83,910 characters, and the comment fell back to "only
// the verdict shown" for every case.)
func TestOneNoisyCaseLeavesTheOthersDetails(t *testing.T) {
	noisy := longIDCases("noisy", 1, 55)[0]
	for i := range noisy.Requests {
		noisy.Requests[i].Checks[6].Detail = "per-frame SSIM:\n" + strings.Repeat("frame 0.81 0.82 0.83 0.84 0.85 0.86 0.87 0.88\n", 40)
	}
	cases := []results.CaseResult{noisy}
	for k := range 5 {
		c := longIDCases(fmt.Sprintf("other%d", k), 1, 2)[0]
		c.Requests[1].Checks[6].Detail = fmt.Sprintf("per-frame SSIM of other case %d:\n", k) + strings.Repeat("frame 0.81 0.82\n", 5)
		cases = append(cases, c)
	}
	r := runReport(lane("base", cases...))
	c := Comment(r)
	if n := utf8.RuneCountInString(c); n >= commentLimit {
		t.Fatalf("comment of %d characters", n)
	}
	wellFormed(t, c)
	if !strings.Contains(c, "_52 more failing requests of this case not shown here, with their details. The full report is in the [job "+
		"summary](https://github.com/o/r/actions/runs/99)._") {
		t.Errorf("the noisy case does not count what it leaves out:\n%s", c)
	}
	for k := range 5 {
		if want := fmt.Sprintf("per-frame SSIM of other case %d:", k); !strings.Contains(c, want) {
			t.Errorf("other case %d lost its details (%q)", k, want)
		}
	}
	if strings.Contains(c, "only the verdict shown") || strings.Contains(c, "only the first failing requests shown") {
		t.Error("the comment was trimmed down to the verdicts")
	}
	// The job summary holds every request in full.
	if s := Summary(r); strings.Contains(s, "not shown here") || !strings.Contains(s, "**55/55 · `consistency.ssim`**") {
		t.Error("the job summary does not hold every failing request of the noisy case in full")
	}
}
