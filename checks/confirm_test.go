package checks

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/results"
)

// over is a check that failed by crossing its limit (or passed under it).
func over(name, src string, st results.Status) results.Check {
	return results.Check{Name: name, Source: src, Status: st, Value: Float(120), Limit: Float(100)}
}

func TestConfirmable(t *testing.T) {
	tests := []struct {
		name string
		c    results.Check
		want bool
	}{
		{"perf over its limit", over(PerfE2E, "", results.Fail), true},
		{"stage over its limit", over(PerfStagePrefix+"DenoisingStage", "", results.Fail), true},
		{"memory over its limit", over(MemoryRuntimePeak, SourceServerReserved, results.Fail), true},
		{"passed", over(PerfE2E, "", results.Pass), false},
		{"known", over(PerfE2E, "", results.Known), false},
		{"errored", over(PerfE2E, "", results.Error), false},
		{"not measured", results.Check{Name: PerfE2E, Status: results.Fail, Limit: Float(100)}, false},
		{"no limit (missing baseline)", results.Check{Name: PerfE2E, Status: results.Fail, Value: Float(1)}, false},
		{"missing perf record", results.Check{Name: results.PerfRecord, Status: results.Fail}, false},
		{"consistency", over(ConsistencySSIM, "", results.Fail), false},
		{"server crash", results.Check{Name: results.ServerAlive, Status: results.Fail}, false},
	}
	for _, tt := range tests {
		if got := confirmable(tt.c); got != tt.want {
			t.Errorf("%s: confirmable = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestLabelConfirmed checks each label: reproduced (k ≥ 1), not reproduced (passed in every
// confirmation request), inconclusive (no verdict in some, or none sent), and that flaky
// turns only a not-reproduced failure into Flaky, never the failures of other checks.
func TestLabelConfirmed(t *testing.T) {
	e2e := func(st results.Status) results.Check { return over(PerfE2E, "", st) }
	mem := func(st results.Status) results.Check { return over(MemoryRuntimePeak, SourceServerReserved, st) }
	crash := results.RequestResult{Confirm: true, Checks: []results.Check{{Name: results.ServerAlive, Status: results.Fail}}}
	conf := func(cs ...results.Check) results.RequestResult {
		return results.RequestResult{Confirm: true, Checks: cs}
	}

	tests := []struct {
		name    string
		confirm []results.RequestResult
		note    string
		flaky   bool
		// the labels of request 2's e2e and memory checks, and request 1's output check
		want []*results.Confirmation
		st   []results.Status
	}{
		{
			name:    "one-off: not reproduced",
			confirm: []results.RequestResult{conf(e2e(results.Pass), mem(results.Pass)), conf(e2e(results.Pass), mem(results.Pass))},
			want: []*results.Confirmation{
				{State: results.ConfirmNotReproduced, Passed: 2, Of: 2, Max: 3},
				{State: results.ConfirmNotReproduced, Passed: 2, Of: 2, Max: 3},
				nil,
			},
			st: []results.Status{results.Fail, results.Fail, results.Fail},
		},
		{
			name:    "one-off with flaky",
			confirm: []results.RequestResult{conf(e2e(results.Pass), mem(results.Pass)), conf(e2e(results.Pass), mem(results.Pass))},
			flaky:   true,
			want: []*results.Confirmation{
				{State: results.ConfirmNotReproduced, Passed: 2, Of: 2, Max: 3},
				{State: results.ConfirmNotReproduced, Passed: 2, Of: 2, Max: 3},
				nil,
			},
			st: []results.Status{results.Flaky, results.Flaky, results.Fail}, // the consistency failure stays red
		},
		{
			name:    "persistent: reproduced, stopped early",
			confirm: []results.RequestResult{conf(e2e(results.Fail), mem(results.Pass))},
			note:    "stopped early",
			flaky:   true,
			want: []*results.Confirmation{
				{State: results.ConfirmReproduced, Failed: 1, Of: 1, Max: 3, Note: "stopped early"},
				{State: results.ConfirmNotReproduced, Passed: 1, Of: 1, Max: 3, Note: "stopped early"},
				nil,
			},
			st: []results.Status{results.Fail, results.Flaky, results.Fail},
		},
		{
			name:    "crash: inconclusive, never a pass",
			confirm: []results.RequestResult{conf(e2e(results.Pass), mem(results.Pass)), crash},
			note:    "the server died during confirmation request 2/3",
			flaky:   true,
			want: []*results.Confirmation{
				{State: results.ConfirmInconclusive, Passed: 1, Unmeasured: 1, Of: 2, Max: 3, Note: "the server died during confirmation request 2/3"},
				{State: results.ConfirmInconclusive, Passed: 1, Unmeasured: 1, Of: 2, Max: 3, Note: "the server died during confirmation request 2/3"},
				nil,
			},
			st: []results.Status{results.Fail, results.Fail, results.Fail},
		},
		{
			name:  "none sent",
			flaky: true,
			want: []*results.Confirmation{
				{State: results.ConfirmInconclusive, Max: 3, Note: "no confirmation request was sent"},
				{State: results.ConfirmInconclusive, Max: 3, Note: "no confirmation request was sent"},
				nil,
			},
			st: []results.Status{results.Fail, results.Fail, results.Fail},
		},
		{
			name:    "reproduced once of two",
			confirm: []results.RequestResult{conf(e2e(results.Pass), mem(results.Fail)), conf(e2e(results.Fail), mem(results.Skip))},
			want: []*results.Confirmation{
				{State: results.ConfirmReproduced, Failed: 1, Passed: 1, Of: 2, Max: 3},
				{State: results.ConfirmReproduced, Failed: 1, Unmeasured: 1, Of: 2, Max: 3},
				nil,
			},
			st: []results.Status{results.Fail, results.Fail, results.Fail},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs := []results.RequestResult{
				{Index: 1, Checks: []results.Check{e2e(results.Pass), mem(results.Pass), over(ConsistencySSIM, "", results.Fail)}},
				{Index: 2, Checks: []results.Check{e2e(results.Fail), mem(results.Fail)}},
			}
			targets := ConfirmTargets(reqs)
			if len(targets) != 2 {
				t.Fatalf("targets %v, want e2e and memory (consistency is not confirmable)", targets)
			}
			given := reqs
			reqs, _, _ = LabelConfirmed(reqs, targets, tt.confirm, 3, tt.note, tt.flaky)
			if given[1].Checks[0].Confirm != nil || given[1].Checks[0].Status != results.Fail {
				t.Errorf("LabelConfirmed changed the requests it was given: %+v", given[1].Checks[0])
			}
			got := []*results.Confirmation{reqs[1].Checks[0].Confirm, reqs[1].Checks[1].Confirm, reqs[0].Checks[2].Confirm}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			st := []results.Status{reqs[1].Checks[0].Status, reqs[1].Checks[1].Status, reqs[0].Checks[2].Status}
			if diff := cmp.Diff(tt.st, st); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			if reqs[0].Checks[0].Confirm != nil {
				t.Errorf("a passing check of request 1 was labelled: %+v", reqs[0].Checks[0].Confirm)
			}
		})
	}
}

func TestReproduced(t *testing.T) {
	targets := ConfirmTargets([]results.RequestResult{{Checks: []results.Check{over(PerfE2E, "", results.Fail), over(PerfDenoiseAvg, "", results.Fail)}}})
	one := results.RequestResult{Checks: []results.Check{over(PerfE2E, "", results.Fail), over(PerfDenoiseAvg, "", results.Pass)}}
	two := results.RequestResult{Checks: []results.Check{over(PerfE2E, "", results.Pass), over(PerfDenoiseAvg, "", results.Fail)}}
	if Reproduced(targets, []results.RequestResult{one}) {
		t.Errorf("Reproduced after one of two checks failed again: want false")
	}
	if !Reproduced(targets, []results.RequestResult{one, two}) {
		t.Errorf("Reproduced after both failed again: want true")
	}
}

func TestConfirmationText(t *testing.T) {
	tests := []struct {
		c    results.Confirmation
		want string
	}{
		{results.Confirmation{State: results.ConfirmReproduced, Failed: 2, Of: 2, Max: 2}, "reproduced in 2/2 confirmation requests"},
		{results.Confirmation{State: results.ConfirmNotReproduced, Passed: 2, Of: 2, Max: 2}, "not reproduced in 0/2 confirmation requests"},
		{
			results.Confirmation{State: results.ConfirmInconclusive, Unmeasured: 1, Of: 1, Max: 2, Note: "the server died"},
			"not confirmed: failed in 0/1 confirmation requests, 1 without a verdict (the server died)",
		},
	}
	for _, tt := range tests {
		if got := tt.c.Text(); got != tt.want {
			t.Errorf("Text() = %q, want %q", got, tt.want)
		}
	}
}

func TestFlakyNote(t *testing.T) {
	fl := func(name string) results.Check {
		c := over(name, "", results.Flaky)
		c.Confirm = &results.Confirmation{State: results.ConfirmNotReproduced, Passed: 2, Of: 2, Max: 2}
		return c
	}
	res := results.Result{Cases: []results.CaseResult{{Requests: []results.RequestResult{
		{Checks: []results.Check{fl(PerfE2E), fl(PerfDenoiseAvg), fl(PerfStagePrefix + "DenoisingStage")}},
		{Checks: []results.Check{over(PerfE2E, "", results.Pass)}},
	}}}}
	if got, want := FlakyNote(res), "1 flaky: perf.e2e not reproduced in 0/2 (+2 more checks)"; got != want {
		t.Errorf("FlakyNote = %q, want %q", got, want)
	}
	res.Cases[0].Requests[0].Checks = res.Cases[0].Requests[0].Checks[:1]
	if got, want := FlakyNote(res), "1 flaky: perf.e2e not reproduced in 0/2"; got != want {
		t.Errorf("FlakyNote = %q, want %q", got, want)
	}
	if got := FlakyNote(results.Result{}); got != "" {
		t.Errorf("FlakyNote of nothing flaky = %q, want empty", got)
	}
}

// TestConfirmTargetsLeaveKnownFailuresOut: after MarkKnown (the judgement's known-failures
// step), a failure an entry covers is not confirmed; the first matching entry decides, and
// an expired one covers nothing (its failure counts, so it is confirmed).
func TestConfirmTargetsLeaveKnownFailuresOut(t *testing.T) {
	today := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	entries := []KnownEntry{
		{Case: "t2i", Check: PerfE2E, Request: 2, Until: "2025-05-01"}, // expired, request 2 only
		{Case: "t2*", Check: "perf.*"},
	}
	failed := []results.Check{over(PerfE2E, "", results.Fail), over(PerfDenoiseAvg, "", results.Fail), over(MemoryRuntimePeak, "", results.Fail)}
	tests := []struct {
		id   string
		req  int
		want []string
	}{
		{"t2i", 1, []string{MemoryRuntimePeak}},
		{"t2i", 2, []string{MemoryRuntimePeak, PerfE2E}}, // the expired entry matches perf.e2e first
		{"t2v", 2, []string{MemoryRuntimePeak}},
		{"i2v", 1, []string{MemoryRuntimePeak, PerfDenoiseAvg, PerfE2E}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", tt.id, tt.req), func(t *testing.T) {
			reqs := []results.RequestResult{{Index: tt.req, Checks: MarkKnown(entries, tt.id, tt.req, failed, today)}}
			var got []string
			for _, c := range failed {
				if ConfirmTargets(reqs)[confirmKey(c)] {
					got = append(got, c.Name)
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
		})
	}
}
