package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// TestProblems: one line per cause — a leak seen by two sources on requests 2 and 3 is one
// line, with the worst value, its limit and ratio and the cause; a crash is one line, which
// names the requests it kept from being sent.
func TestProblems(t *testing.T) {
	leak := func(s reqSpec, mib float64) reqSpec { s.vram, s.leak = s.vram+mib, mib; return s }
	c := caseOf("wan", false, good, leak(goodWarm, 1200), leak(goodWarm, 2400))
	crashed := caseOf("flux", false, good, reqSpec{crash: true}, good)
	crashed.Requests[2] = results.RequestResult{Index: 3, Of: 3, Status: results.Skip,
		Checks: []results.Check{checks.Skipped(results.ServerAlive, "not sent: the server died during request 2/3")}}
	l := lane("base", c, crashed)
	var got []string
	for _, p := range problems([]results.Result{l}) {
		got = append(got, p.line(false, ""))
	}
	want := []string{
		"❌ `wan` requests 2, 3 of 3 · **runtime peak (server_allocated) 34960 MiB** vs limit ≤ 34000 MiB (**1.03× the limit**) " +
			"— memory grows +2400 MiB per request; also runtime peak (server_reserved) 1.03× the limit",
		"❌ `flux` request 2/3 · **server** — server crashed, exit 139, and made runtime peak (server_reserved) impossible for request 2/3; request 3/3 not sent",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestCrashConsequencesFoldIntoTheCrashLine: what a crash or a failed start made impossible —
// checks without a value on the crashed request and after, requests never sent — is told in
// the crash's line, not as problems of their own; a measured failure on the same request and
// a cancelled request keep their own lines, and so does a missing value before the crash.
func TestCrashConsequencesFoldIntoTheCrashLine(t *testing.T) {
	crash := func() results.Check {
		ck := checks.Failed(results.ServerAlive, "server process exited (exit status 139) while the request was in flight (EOF)")
		ck.Cause = "server crashed, exit 139"
		return ck
	}
	noPeak := func(src string) results.Check {
		ck := checks.Failed(checks.MemoryRuntimePeak,
			"memory.runtime_peak: peak VRAM metric missing (the server reported no memory_snapshots and NVML was unavailable)")
		ck.Source, ck.Limit, ck.Unit = src, checks.Float(3524), "MiB"
		return ck
	}
	noRecord := checks.Failed(results.PerfRecord, "no perf record for the request")
	unsent := func(i, of int) results.RequestResult {
		return results.RequestResult{Index: i, Of: of, Status: results.Skip,
			Checks: []results.Check{checks.Skipped(results.ServerAlive, fmt.Sprintf("not sent: the server died during request %d/%d", i-1, of))}}
	}
	testCaseProblems(t, []caseProblemsTest{{
		name: "crash during request 2 of 4",
		c: results.CaseResult{ID: "t2i", Requests: []results.RequestResult{
			reqWith(1, 4, results.Pass, checks.Passed(results.ServerAlive, "")),
			reqWith(2, 4, results.Fail, crash(), noPeak("server_reserved"), noPeak("server_allocated"), noRecord),
			unsent(3, 4), unsent(4, 4),
		}},
		want: []string{"❌ `t2i` request 2/4 · **server** — server crashed, exit 139, and made runtime peak (server_reserved), " +
			"runtime peak (server_allocated), perf record (server total) impossible for request 2/4; requests 3, 4 of 4 not sent"},
	}, {
		name: "failed start: every request, and the load peak",
		c: results.CaseResult{ID: "wan", Checks: []results.Check{
			{Name: results.ServerAlive, Status: results.Fail, Cause: "server failed to start, exit 1"},
			{Name: checks.MemoryLoadPeak, Status: results.Fail, Detail: "no load peak"},
		}, Requests: []results.RequestResult{unsent(1, 3), unsent(2, 3), unsent(3, 3)}},
		want: []string{"❌ `wan` case · **server** — server failed to start, exit 1, and made load peak impossible for the case; requests 1–3 of 3 not sent"},
	}, {
		name: "many checks made impossible, on the case and a request: named together per place, at most three",
		c: results.CaseResult{ID: "hy", Checks: []results.Check{
			{Name: results.ServerAlive, Status: results.Error, Cause: "server failed to start, exit 1"},
			{Name: checks.MemoryLoadPeak, Status: results.Fail},
		}, Requests: []results.RequestResult{
			reqWith(1, 2, results.Fail, noPeak("server_reserved"), noPeak("server_allocated"), noPeak("nvml_process"), noRecord),
			unsent(2, 2),
		}},
		want: []string{"⛔ `hy` case · **server** — server failed to start, exit 1, and made load peak impossible for the case, " +
			"runtime peak (server_reserved), runtime peak (server_allocated) impossible for request 1/2 (and 2 more checks); request 2/2 not sent"},
	}, {
		name: "a measured failure and a missing value before the crash keep their lines",
		c: results.CaseResult{ID: "flux", Requests: []results.RequestResult{
			reqWith(1, 2, results.Fail, checks.Passed(results.ServerAlive, ""), noPeak("server_reserved")),
			reqWith(2, 2, results.Fail, val(checks.PerfE2E, results.Fail, 81200, 66000, "ms"), crash(), noPeak("server_reserved")),
		}},
		want: []string{
			"❌ `flux` request 1/2 · **runtime peak (server_reserved)** — memory.runtime_peak: " +
				"peak VRAM metric missing (the server reported no memory_snapshots and NVML was unavailab…",
			"❌ `flux` request 2/2 · **E2E (server) 81.2 s** vs limit ≤ 66.0 s (**1.23× the limit**)",
			"❌ `flux` request 2/2 · **server** — server crashed, exit 139, and made runtime peak (server_reserved) impossible for request 2/2",
		},
	}, {
		name: "a cancelled request after the crash is a cause of its own",
		c: results.CaseResult{ID: "sd3", Requests: []results.RequestResult{
			reqWith(1, 2, results.Fail, crash()),
			reqWith(2, 2, results.Cancelled, results.Check{Name: results.ServerAlive, Status: results.Cancelled, Detail: "run cancelled"}),
		}},
		want: []string{
			"❌ `sd3` request 1/2 · **server** — server crashed, exit 139",
			"🚫 `sd3` request 2/2 · **server** — run cancelled",
		},
	}})
}

// reqWith is request i of of with status st and checks cs.
func reqWith(i, of int, st results.Status, cs ...results.Check) results.RequestResult {
	return results.RequestResult{Index: i, Of: of, Status: st, Checks: cs}
}

// caseProblemsTest is one case and the Problems lines it must give, failed, alone in a lane.
type caseProblemsTest struct {
	name string
	c    results.CaseResult
	want []string
}

func testCaseProblems(t *testing.T, tests []caseProblemsTest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.c.Status = results.Fail
			var got []string
			for _, p := range problems([]results.Result{{Lane: "base", Cases: []results.CaseResult{tt.c}}}) {
				got = append(got, p.line(false, ""))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHangConsequencesFoldIntoTheHangLine: the requests a hung request kept from being sent
// (the runner stops the server and records them not sent) are told in the hang's line, found
// by the shape the runner records, not by its words; a skip (an AMD video timeout) or a cancel
// before them, or no failure at all, leaves them a line of their own.
func TestHangConsequencesFoldIntoTheHangLine(t *testing.T) {
	hung := func() results.Check {
		ck := checks.Failed(results.OutputPresent, "no complete output within the request timeout of 10m0s (server alive but not answering)")
		ck.Cause = "request hung: no output within 10m0s"
		return ck
	}
	alive := checks.Passed(results.ServerAlive, "")
	unsent := func(i, of int, why string) results.RequestResult {
		return results.RequestResult{Index: i, Of: of, Status: results.Skip, Checks: []results.Check{checks.Skipped(results.ServerAlive, why)}}
	}
	testCaseProblems(t, []caseProblemsTest{{
		name: "hang during request 2 of 4",
		c: results.CaseResult{ID: "t2v", Requests: []results.RequestResult{
			reqWith(1, 4, results.Pass, alive),
			reqWith(2, 4, results.Fail, alive, hung()),
			unsent(3, 4, "not sent: the server was stopped after request 2/4 hung"),
			unsent(4, 4, "not sent: the server was stopped after request 2/4 hung"),
		}},
		want: []string{"❌ `t2v` request 2/4 · **output** — request hung: no output within 10m0s; requests 3, 4 of 4 not sent"},
	}, {
		name: "the words of the not-sent requests do not decide",
		c: results.CaseResult{ID: "t2v", Requests: []results.RequestResult{
			reqWith(1, 2, results.Fail, alive, hung()),
			unsent(2, 2, "some other wording"),
		}},
		want: []string{"❌ `t2v` request 1/2 · **output** — request hung: no output within 10m0s; request 2/2 not sent"},
	}, {
		name: "with concurrency, a request that finished after the hang is passed over",
		c: results.CaseResult{ID: "t2v", Requests: []results.RequestResult{
			reqWith(1, 3, results.Fail, alive, hung()),
			reqWith(2, 3, results.Pass, alive),
			unsent(3, 3, "not sent: the server was stopped after request 1/3 hung"),
		}},
		want: []string{"❌ `t2v` request 1/3 · **output** — request hung: no output within 10m0s; request 3/3 not sent"},
	}, {
		name: "a skipped request before them keeps them apart",
		c: results.CaseResult{ID: "wan", Requests: []results.RequestResult{
			reqWith(1, 3, results.Fail, alive, hung()),
			reqWith(2, 3, results.Skip, alive, checks.Skipped(results.OutputPresent, "video job timed out on AMD")),
			unsent(3, 3, "not sent: video job timed out on AMD"),
		}},
		want: []string{
			"❌ `wan` request 1/3 · **output** — request hung: no output within 10m0s",
			"⏭️ `wan` request 2/3 — skip: video job timed out on AMD",
			"⏭️ `wan` request 3/3 — skip: not sent: video job timed out on AMD",
		},
	}, {
		name: "not-sent requests after passing ones keep their line",
		c: results.CaseResult{ID: "sd3", Requests: []results.RequestResult{
			reqWith(1, 2, results.Pass, alive),
			unsent(2, 2, "not sent: the server was stopped"),
		}},
		want: []string{"⏭️ `sd3` request 2/2 — skip: not sent: the server was stopped"},
	}})
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

// TestProblemsCarryTheTrend: with Report.Trend set, a failing check's line under Problems ends
// with what Trend says of it (the base branch's history), asked with the lane, case and the
// check the line shows; lines of requests that did not run are not asked.
func TestProblemsCarryTheTrend(t *testing.T) {
	leak := func(s reqSpec, mib float64) reqSpec { s.vram, s.leak = s.vram+mib, mib; return s }
	crashed := caseOf("flux", false, good, reqSpec{crash: true}, good)
	crashed.Requests[2] = results.RequestResult{Index: 3, Of: 3, Status: results.Skip,
		Checks: []results.Check{checks.Skipped(results.ServerAlive, "not sent: the server died during request 2/3")}}
	l := lane("base", caseOf("wan", false, good, leak(goodWarm, 1200), leak(goodWarm, 2400)), crashed)
	var asked []string
	r := &Report{Lanes: []results.Result{l}, Trend: func(lane *results.Result, caseID string, c results.Check) string {
		asked = append(asked, lane.Lane+"/"+caseID+"/"+c.Name)
		if caseID != "wan" {
			return ""
		}
		return "base branch, last 10 runs: ▁▂▃"
	}}
	var b strings.Builder
	problemList(&b, r, level{})
	if !strings.Contains(
		b.String(),
		"(**1.03× the limit**) — memory grows +2400 MiB per request; also runtime peak (server_reserved) 1.03× the limit · base branch, last 10 runs: ▁▂▃\n",
	) {
		t.Errorf("the wan line does not end with its trend:\n%s", b.String())
	}
	if strings.Count(b.String(), "last 10 runs") != 1 {
		t.Errorf("a trend on another line:\n%s", b.String())
	}
	want := []string{"base/wan/" + checks.MemoryRuntimePeak, "base/flux/" + results.ServerAlive}
	if diff := cmp.Diff(want, asked); diff != "" {
		t.Errorf("Trend asked (-want +got):\n%s", diff)
	}
}

// TestRatioSaysWhatItIsAgainst: the factor of a problem line is value / limit and says so,
// for a limit on either side; without a value or a usable limit there is none.
func TestRatioSaysWhatItIsAgainst(t *testing.T) {
	for _, tt := range []struct {
		ck   results.Check
		want string
	}{
		{val(checks.PerfE2E, results.Fail, 81200, 66000, "ms"), "1.23× the limit"},
		{val(checks.ConsistencySSIM, results.Fail, 0.728, 0.92, ""), "0.79× the limit"},
		{results.Check{Name: checks.PerfE2E, Value: checks.Float(81200)}, ""},
		{results.Check{Name: checks.PerfE2E, Limit: checks.Float(66000)}, ""},
		{val(checks.PerfE2E, results.Fail, 81200, 0, "ms"), ""},
	} {
		if got := ratio(&tt.ck); got != tt.want {
			t.Errorf("ratio(%s) = %q, want %q", tt.ck.Name, got, tt.want)
		}
	}
}

// TestDerivedStepMetricsFoldUnderTheirStage: the per-step figures (sampled steps, their mean
// and median) that fail with the denoising stage are counted under it, not named; the line is
// told by a check that is not derived unless only derived ones failed, and never by a check
// of a milder status. The first case is the H200's one-off slow request of docs/noise.md,
// with its measured values, limits and spreads.
func TestDerivedStepMetricsFoldUnderTheirStage(t *testing.T) {
	ck := func(name string, st results.Status, v, limit, baseline, mad float64) results.Check {
		c := val(name, st, v, limit, "ms")
		c.Baseline = checks.Float(baseline)
		c.Spread = &results.Spread{N: 3, Min: baseline - 2*mad, Median: baseline - mad, Max: baseline, MAD: mad}
		return c
	}
	fl := results.Flaky
	h200 := []results.Check{
		ck(checks.PerfE2E, fl, 3875.967, 1742.538, 1394.03, 1.02),
		ck(checks.PerfDenoiseAvg, fl, 193.678, 89.57, 69.57, 0.06),
		ck(checks.PerfDenoiseMedian, fl, 193.701, 84.62, 64.62, 0.03),
		ck(checks.PerfStepPrefix+"4", fl, 193.843, 84.7, 64.7, 0.09),
		ck(checks.PerfStepPrefix+"8", fl, 193.817, 84.54, 64.54, 0.0076),
		ck(checks.PerfStepPrefix+"11", fl, 193.356, 84.6, 64.6, 0.026),
		ck(checks.PerfStepPrefix+"15", fl, 193.708, 84.74, 64.74, 0.037),
		ck(checks.PerfStepPrefix+"19", fl, 193.505, 84.66, 64.66, 0.098),
		ck(checks.PerfStagePrefix+checks.DenoisingStage, fl, 3873.645, 1739.388, 1391.51, 1.22),
	}
	step := func(i string, st results.Status, v float64) results.Check {
		return ck(checks.PerfStepPrefix+i, st, v, 84.6, 64.6, 0.03)
	}
	tests := []struct {
		name string
		cs   []results.Check
		want string
	}{{
		name: "H200 one-off: the stage tells it, E2E is also named, seven step metrics fold under the stage",
		cs:   h200,
		want: "🟨 `oneoff` request 2/3 · **Denoising stage 3.9 s** vs limit ≤ 1.7 s (**2.23× the limit**, >100 MAD) — +178 % vs baseline 1.4 s; " +
			"also E2E (server) 2.22× the limit; under Denoising stage: 7 step metrics, up to 2.29× the limit",
	}, {
		name: "steps failed, the stage passed: counted on their own",
		cs: []results.Check{
			ck(checks.PerfE2E, results.Fail, 1900, 1742.538, 1394.03, 1.02),
			ck(checks.PerfStagePrefix+checks.DenoisingStage, results.Pass, 1700, 1739.388, 1391.51, 1.22),
			step("4", results.Fail, 93), step("8", results.Fail, 101.5),
		},
		want: "❌ `oneoff` request 2/3 · **E2E (server) 1.9 s** vs limit ≤ 1.7 s (**1.09× the limit**, >100 MAD) — +36 % vs baseline 1.4 s; " +
			"2 denoise-step metrics, up to 1.20× the limit",
	}, {
		name: "only steps failed: the worst tells it, the rest are counted",
		cs:   []results.Check{step("4", results.Fail, 93), step("8", results.Fail, 101.5), step("11", results.Fail, 90)},
		want: "❌ `oneoff` request 2/3 · **denoise step 8 101.5 ms** vs limit ≤ 84.6 ms (**1.20× the limit**, baseline spread under 1 ms) " +
			"— +57 % vs baseline 64.6 ms; " +
			"2 more denoise-step metrics, up to 1.10× the limit",
	}, {
		name: "a red step outranks a flaky stage",
		cs: []results.Check{
			ck(checks.PerfStagePrefix+checks.DenoisingStage, fl, 3873.645, 1739.388, 1391.51, 1.22),
			step("8", results.Fail, 101.5),
		},
		want: "❌ `oneoff` request 2/3 · **denoise step 8 101.5 ms** vs limit ≤ 84.6 ms (**1.20× the limit**, baseline spread under 1 ms) " +
			"— +57 % vs baseline 64.6 ms; " +
			"also Denoising stage 2.23× the limit",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := results.CaseResult{ID: "oneoff", Status: results.Fail, Requests: []results.RequestResult{
				{Index: 1, Of: 3, Status: results.Pass}, {Index: 2, Of: 3, Status: results.Fail, Checks: tt.cs}, {Index: 3, Of: 3, Status: results.Pass},
			}}
			ps := problems([]results.Result{{Lane: "oneoff", Cases: []results.CaseResult{c}}})
			var got []string
			for _, p := range ps {
				got = append(got, p.line(false, ""))
			}
			if diff := cmp.Diff([]string{tt.want}, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOtherCellCountsStepMetrics: the per-request table's cell of other failed checks names
// the checks that are not derived from the stage's steps and counts the derived ones after
// them; with nothing else failed, one derived check is named.
func TestOtherCellCountsStepMetrics(t *testing.T) {
	f := func(name string, v float64) results.Check { return val(name, results.Fail, v, 84.6, "ms") }
	for _, tt := range []struct {
		name string
		cs   []results.Check
		want string
	}{
		{"stage and steps", []results.Check{f(checks.PerfDenoiseAvg, 193.7), f(checks.PerfStagePrefix+checks.DenoisingStage, 3873.6),
			f(checks.PerfStepPrefix+"8", 193.8)},
			"**❌ Denoising stage 3.9 s**<br>+2 step metrics"},
		{"steps only", []results.Check{f(checks.PerfStepPrefix+"4", 193.8), f(checks.PerfStepPrefix+"8", 193.8)},
			"**❌ denoise step 4 193.8 ms**<br>+1 step metric"},
		{"more than two others", []results.Check{f(checks.PerfLoad, 90), f(checks.PerfStagePrefix+"DecodingStage", 90),
			f(checks.PerfStagePrefix+checks.DenoisingStage, 90), f(checks.PerfStepPrefix+"4", 90)},
			"**❌ load time 90.0 ms**<br>**❌ Decoding stage 90.0 ms**<br>+1 more<br>+1 step metric"},
	} {
		c := &results.CaseResult{ID: "c"}
		rr := &results.RequestResult{Index: 2, Of: 2, Status: results.Fail, Checks: tt.cs}
		// The cell keeps a value with its unit by non-breaking spaces; read as spaces here.
		if got := strings.ReplaceAll(cellOther(row{c: c, rr: rr}), nbsp, " "); got != tt.want {
			t.Errorf("%s: cellOther = %q, want %q", tt.name, got, tt.want)
		}
	}
}
