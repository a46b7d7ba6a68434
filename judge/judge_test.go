package judge

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
	"github.com/diffusion-check/diffusion-check/suite"
)

// baselineFile is one image scenario "c" with perf and memory baselines, under tolerances
// that make the numbers of these tests easy: e2e 1000 ms → limit 1250 ms; runtime peak
// 4000 MiB → limit max(4000 × 1.02, 4000 + 128) = 4128 MiB.
const baselineFile = `{"tolerances": {"pr_test": {"e2e": 0.25, "denoise_stage": 0.25, "non_denoise_stage": 0.8, "denoise_step": 0.3, "denoise_agg": 0.2}},
 "sampling": {"step_fractions": [0.0, 1.0]},
 "scenarios": {"c": {"stages_ms": {"DenoisingStage": 100.0}, "denoise_step_ms": {"0": 10.0, "1": 10.0},
   "expected_e2e_ms": 1000.0, "expected_avg_denoise_ms": 10.0, "expected_median_denoise_ms": 10.0,
   "expected_load_ms": 1000.0, "load_peak_vram_mb": 2000.0, "runtime_peak_vram_mb": 4000.0}}}`

func config(t *testing.T, enforce, rocm bool, known ...checks.KnownEntry) *Config {
	t.Helper()
	f, err := baselines.Parse("h100.json", []byte(baselineFile))
	if err != nil {
		t.Fatal(err)
	}
	tol, err := f.Tolerances("", baselines.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	return &Config{File: f, Tol: tol, Enforce: enforce, ROCm: rocm, Known: known, Today: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
}

// measuredRequest is request index of case c as the runner hands it over: answered, its perf
// record joined (e2eMs), its reserved peak measured.
func measuredRequest(index int, e2eMs, peakMiB float64) results.RequestResult {
	return results.RequestResult{Case: "c", Index: index, Of: 3, ServerTotalMs: e2eMs,
		Stages: results.Stages{{Name: "DenoisingStage", Ms: 90}}, StepsMs: []float64{10, 10},
		PeakVRAMMiB: map[string]float64{checks.SourceServerReserved: peakMiB},
		Checks: []results.Check{
			checks.Passed(results.ServerAlive, ""),
			checks.Passed(results.OutputPresent, ""),
			{Name: checks.ConsistencySSIM, Status: results.Fail, Detail: "ssim 0.5 < 0.9"},
			checks.PerfRecordJoined(e2eMs, 1, 2, nil),
		}}
}

// check is the check of a verdict with name (and source, for memory), or a zero one.
func check(rr results.RequestResult, name, source string) results.Check {
	for _, c := range rr.Checks {
		if c.Name == name && c.Source == source {
			return c
		}
	}
	return results.Check{}
}

// TestRequestJudgesInTheDocumentedOrder is a table test over the whole pipeline: each row is
// a request and what is known when it finishes, and the final statuses its judgement gives.
// The rows where the order of rules decides the outcome say which order.
func TestRequestJudgesInTheDocumentedOrder(t *testing.T) {
	c := &suite.Case{ID: "c", Modality: suite.Image}
	prev := measuredRequest(1, 900, 3400)
	ssimKnown := checks.KnownEntry{Case: "c", Check: checks.ConsistencySSIM, Reason: "drift", Source: "known.yaml:1"}
	growthKnown := checks.KnownEntry{Case: "c", Check: checks.MemoryRuntimePeak, Reason: "leak", Source: "known.yaml:2"}
	type want struct {
		e2e, mem, ssim, request results.Status
		grew                    int
		detail                  string // a part of memory.runtime_peak's detail
		warned                  bool   // perf.e2e passed over its limit with a warning
	}
	for _, tt := range []struct {
		name string
		cfg  *Config
		in   Input
		want want
	}{
		{"first request: perf and memory against the baseline, no growth", config(t, true, false),
			Input{Case: c, Request: measuredRequest(1, 900, 3400), Answered: true},
			want{results.Pass, results.Pass, results.Fail, results.Fail, 0, "3400 MiB ≤ limit 4128", false}},
		{"growth is judged when the request finishes, under the baseline", config(t, true, false),
			Input{Case: c, Request: measuredRequest(2, 900, 3800), Answered: true, Previous: &prev},
			want{results.Pass, results.Fail, results.Fail, results.Fail, 1, "grew from 3400 to 3800 MiB since request 1", false}},
		{"enforcement after growth: baseline mode records the growth too", config(t, false, false),
			Input{Case: c, Request: measuredRequest(2, 900, 3800), Answered: true, Previous: &prev},
			want{results.Skip, results.Skip, results.Fail, results.Fail, 0,
				"baseline mode: recorded, not enforced (would be fail): server_reserved grew from 3400", false}},
		{"AMD: perf over its limit warns, memory has no verdict, no growth", config(t, true, true),
			Input{Case: c, Request: measuredRequest(2, 2100, 3800), Answered: true, Previous: &prev},
			want{results.Pass, results.Skip, results.Fail, results.Fail, 0, checks.NoVRAMVerdict, true}},
		{"known after growth: a listed growth is known, and so is a measured check", config(t, true, false, ssimKnown, growthKnown),
			Input{Case: c, Request: measuredRequest(2, 900, 3800), Answered: true, Previous: &prev},
			want{results.Pass, results.Known, results.Known, results.Known, 0, "grew from 3400", false}},
		{"a request the server did not answer has no timings to judge", config(t, true, false),
			Input{Case: c, Request: measuredRequest(2, 900, 3800), Previous: &prev},
			want{"", results.Fail, results.Fail, results.Fail, 1, "grew from 3400", false}},
		{"no config: only the status", nil,
			Input{Case: c, Request: measuredRequest(2, 900, 3800), Answered: true, Previous: &prev},
			want{"", "", results.Fail, results.Fail, 0, "", false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			given := tt.in.Request.Checks
			v := tt.cfg.Request(tt.in)
			mem := check(v.Request, checks.MemoryRuntimePeak, checks.SourceServerReserved)
			e2e := check(v.Request, checks.PerfE2E, "")
			got := want{e2e.Status, mem.Status, check(v.Request, checks.ConsistencySSIM, "").Status,
				v.Request.Status, len(v.Grew), tt.want.detail, strings.HasPrefix(e2e.Note, "warning:")}
			if !strings.Contains(mem.Detail, tt.want.detail) {
				got.detail = mem.Detail
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("verdict (-want +got):\n%s\nchecks: %+v", diff, v.Request.Checks)
			}
			if diff := cmp.Diff(given, tt.in.Request.Checks); diff != "" {
				t.Errorf("Request changed the checks it was given:\n%s", diff)
			}
		})
	}
}

// TestRequestKeepsACancelledRequestCancelled: the status rule does not recompute a request
// the run cut short.
func TestRequestKeepsACancelledRequestCancelled(t *testing.T) {
	rr := results.RequestResult{Case: "c", Index: 1, Of: 1, Status: results.Cancelled,
		Checks: []results.Check{{Name: results.ServerAlive, Status: results.Cancelled}}}
	if got := config(t, true, false).Request(Input{Case: &suite.Case{ID: "c"}, Request: rr}).Request.Status; got != results.Cancelled {
		t.Errorf("status %s, want cancelled", got)
	}
}

// TestRequestRulesAreTheDocumentedOrder: the order of a request's rules is written once, in
// requestRules, and the package documentation and docs/architecture.md ("How a request is
// judged") list the same steps in the same order.
func TestRequestRulesAreTheDocumentedOrder(t *testing.T) {
	var names []string
	for _, r := range requestRules() {
		names = append(names, r.name)
	}
	names = append(names, "status") // Request's last step, over every check
	if diff := cmp.Diff([]string{"perf", "memory", "growth", "enforcement", "spread", "known", "status"}, names); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	arch, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(arch), "## How a request is judged")
	if !ok {
		t.Fatal(`docs/architecture.md has no section "How a request is judged"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for doc, text := range map[string]string{"docs/architecture.md": section, "the package doc (doc.go)": string(src)} {
		var listed []string
		for _, m := range regexp.MustCompile(`(?m)^(?://)?\s*\d+\. \*{0,2}`+"`?"+`([a-z]+)`).FindAllStringSubmatch(text, -1) {
			listed = append(listed, m[1])
		}
		if diff := cmp.Diff(names, listed); diff != "" {
			t.Errorf("%s lists the steps (-rules +doc):\n%s", doc, diff)
		}
	}
}

// TestCase: the case-level verdicts of a server start, with the AMD rule (perf.load only
// warns) and the same enforcement as a request's.
func TestCase(t *testing.T) {
	c := &suite.Case{ID: "c", Modality: suite.Image}
	cr := results.CaseResult{ID: "c", Load: &results.Load{DurationMs: 2100, PeakVRAMMiB: map[string]float64{checks.SourceServerReserved: 1900}},
		Checks: []results.Check{checks.Passed(results.ServerAlive, "")}}
	for _, tt := range []struct {
		name       string
		cfg        *Config
		load, peak results.Status
		warned     bool
	}{
		// 2100 ms against 1000 ms: over 1800 ms (tolerance 0.8), over 2000 ms on AMD (1.0).
		{"CUDA", config(t, true, false), results.Fail, results.Pass, false},
		{"AMD: tolerance 1.0, and a limit only warns", config(t, true, true), results.Pass, results.Skip, true},
		{"baseline mode", config(t, false, false), results.Skip, results.Skip, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.cfg.Case(c, cr)
			byName := map[string]results.Check{}
			for _, ck := range got {
				byName[ck.Name] = ck
			}
			if byName[results.ServerAlive].Status != results.Pass {
				t.Errorf("the measured case checks are not kept: %+v", got)
			}
			load := byName[checks.PerfLoad]
			if load.Status != tt.load || byName[checks.MemoryLoadPeak].Status != tt.peak || strings.HasPrefix(load.Note, "warning:") != tt.warned {
				t.Errorf("perf.load %s (note %q), memory.load_peak %s; want %s (warned %v), %s: %+v",
					load.Status, load.Note, byName[checks.MemoryLoadPeak].Status, tt.load, tt.warned, tt.peak, got)
			}
		})
	}
	if len(cr.Checks) != 1 {
		t.Errorf("Case changed the case it was given: %+v", cr.Checks)
	}
}

// TestConfirmationSaysWhatChanged: the labels of a case's confirmation requests come back as
// new requests, with a revision for each one they changed (and none for the others), and the
// requests given are not changed.
func TestConfirmationSaysWhatChanged(t *testing.T) {
	over := func(st results.Status) results.Check {
		return results.Check{Name: checks.PerfE2E, Status: st, Value: checks.Float(1300), Limit: checks.Float(1250)}
	}
	reqs := []results.RequestResult{
		{Case: "c", Index: 1, Of: 2, Status: results.Pass, Checks: []results.Check{checks.Passed(checks.PerfE2E, "")}},
		{Case: "c", Index: 2, Of: 2, Status: results.Fail, Checks: []results.Check{over(results.Fail)}},
	}
	confirm := []results.RequestResult{{Case: "c", Index: 1, Of: 2, Confirm: true, Checks: []results.Check{checks.Passed(checks.PerfE2E, "")}}}
	targets := checks.ConfirmTargets(reqs)
	for _, tt := range []struct {
		onUnconfirmed string
		want          Revision
		status        results.Status
	}{
		{suite.OnUnconfirmedFlaky, Revision{At: 1,
			What: "confirmation: perf.e2e not reproduced in 0/1 confirmation requests: fail → flaky; status fail → flaky"}, results.Flaky},
		{suite.OnUnconfirmedFail, Revision{At: 1, What: "confirmation: perf.e2e not reproduced in 0/1 confirmation requests"}, results.Fail},
	} {
		c := &suite.Case{ID: "c", Noise: suite.Noise{Confirm: 2, OnUnconfirmed: tt.onUnconfirmed}}
		got := Confirmation(c, reqs, targets, confirm, "")
		if diff := cmp.Diff([]Revision{tt.want}, got.Revisions); diff != "" {
			t.Errorf("on_unconfirmed %q: revisions (-want +got):\n%s", tt.onUnconfirmed, diff)
		}
		if got.Requests[1].Status != tt.status || got.Labelled != 1 {
			t.Errorf("on_unconfirmed %q: request 2 %s, labelled %d", tt.onUnconfirmed, got.Requests[1].Status, got.Labelled)
		}
		if reqs[1].Checks[0].Confirm != nil || reqs[1].Status != results.Fail {
			t.Errorf("Confirmation changed the requests it was given: %+v", reqs[1])
		}
	}
}

// TestKnownLeavesConfirmationRequestsAlone: an entry for request 1 does not apply to
// confirmation request 1, whose checks only label the case's failures.
func TestKnownLeavesConfirmationRequestsAlone(t *testing.T) {
	cfg := config(t, true, false, checks.KnownEntry{Case: "c", Check: checks.ConsistencySSIM, Request: 1, Reason: "drift", Source: "known.yaml:1"})
	c := &suite.Case{ID: "c", Modality: suite.Image}
	own := cfg.Request(Input{Case: c, Request: measuredRequest(1, 900, 3400), Answered: true}).Request
	confirm := measuredRequest(1, 900, 3400)
	confirm.Confirm = true
	conf := cfg.Request(Input{Case: c, Request: confirm, Answered: true}).Request
	got := [2]results.Status{check(own, checks.ConsistencySSIM, "").Status, check(conf, checks.ConsistencySSIM, "").Status}
	if got != [2]results.Status{results.Known, results.Fail} {
		t.Errorf("request 1, confirmation request 1: ssim %v, want [known fail]", got)
	}
}

// TestMarkKnownJudgesUnjudgedCaseChecks: the known-failures step alone, for the checks of a
// server that failed to start (no other rule judges them).
func TestMarkKnownJudgesUnjudgedCaseChecks(t *testing.T) {
	cfg := config(t, true, false, checks.KnownEntry{Case: "c", Check: results.ServerAlive, Reason: "flaky host", Source: "known.yaml:1"})
	got := cfg.MarkKnown("c", 0, []results.Check{checks.Failed(results.ServerAlive, "server ref failed to start")})
	if got[0].Status != results.Known {
		t.Errorf("server.alive %s, want known", got[0].Status)
	}
	var none *Config
	if got := none.MarkKnown("c", 0, []results.Check{checks.Failed(results.ServerAlive, "")}); got[0].Status != results.Fail {
		t.Errorf("nil config: %s, want the check as it is", got[0].Status)
	}
}

// TestRealtimeCaseIsJudgedOnItsChunks: the chunk stats a realtime session returned are what
// the perf rule judges (checks.Realtime), not E2E or stages, and only for an answered request.
func TestRealtimeCaseIsJudgedOnItsChunks(t *testing.T) {
	c := &suite.Case{ID: "rt", Modality: suite.Video, Realtime: &suite.Realtime{NumChunks: 2,
		Thresholds: map[string]float64{"max_chunk_total_ms": 35}}}
	rr := results.RequestResult{Case: "rt", Index: 1, Of: 1, E2EMs: 1e9,
		RealtimeChunks: []results.ChunkStats{{ChunkTotalMs: 30}, {ChunkTotalMs: 40}}}
	cfg := &Config{Enforce: true}
	got := cfg.Request(Input{Case: c, Request: rr, Answered: true}).Request
	var names []string
	for _, ck := range got.Checks {
		names = append(names, ck.Name+" "+string(ck.Status))
	}
	if want := []string{"perf.realtime.max_chunk_total_ms fail"}; !slices.Equal(names, want) {
		t.Errorf("checks %v, want %v", names, want)
	}
	if got := cfg.Request(Input{Case: c, Request: rr}).Request.Checks; len(got) != 0 {
		t.Errorf("unanswered request judged: %+v", got)
	}
}
