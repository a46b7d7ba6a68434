package checks

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// over is a check that failed by crossing its limit (or passed under it).
func over(name, src string, st Status) Check {
	return Check{Name: name, Source: src, Status: st, Value: Float(120), Limit: Float(100)}
}

func TestConfirmable(t *testing.T) {
	tests := []struct {
		name string
		c    Check
		want bool
	}{
		{"perf over its limit", over(PerfE2E, "", Fail), true},
		{"stage over its limit", over(PerfStagePrefix+"DenoisingStage", "", Fail), true},
		{"memory over its limit", over(MemoryRuntimePeak, SourceServerReserved, Fail), true},
		{"passed", over(PerfE2E, "", Pass), false},
		{"known", over(PerfE2E, "", Known), false},
		{"errored", over(PerfE2E, "", Error), false},
		{"not measured", Check{Name: PerfE2E, Status: Fail, Limit: Float(100)}, false},
		{"no limit (missing baseline)", Check{Name: PerfE2E, Status: Fail, Value: Float(1)}, false},
		{"missing perf record", Check{Name: PerfRecord, Status: Fail}, false},
		{"consistency", over(ConsistencySSIM, "", Fail), false},
		{"server crash", Check{Name: ServerAlive, Status: Fail}, false},
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
	e2e := func(st Status) Check { return over(PerfE2E, "", st) }
	mem := func(st Status) Check { return over(MemoryRuntimePeak, SourceServerReserved, st) }
	crash := RequestResult{Confirm: true, Checks: []Check{{Name: ServerAlive, Status: Fail}}}
	conf := func(cs ...Check) RequestResult { return RequestResult{Confirm: true, Checks: cs} }

	tests := []struct {
		name    string
		confirm []RequestResult
		note    string
		flaky   bool
		// the labels of request 2's e2e and memory checks, and request 1's output check
		want []*Confirmation
		st   []Status
	}{
		{
			name:    "one-off: not reproduced",
			confirm: []RequestResult{conf(e2e(Pass), mem(Pass)), conf(e2e(Pass), mem(Pass))},
			want: []*Confirmation{
				{State: ConfirmNotReproduced, Passed: 2, Of: 2, Max: 3},
				{State: ConfirmNotReproduced, Passed: 2, Of: 2, Max: 3},
				nil,
			},
			st: []Status{Fail, Fail, Fail},
		},
		{
			name:    "one-off with flaky",
			confirm: []RequestResult{conf(e2e(Pass), mem(Pass)), conf(e2e(Pass), mem(Pass))},
			flaky:   true,
			want: []*Confirmation{
				{State: ConfirmNotReproduced, Passed: 2, Of: 2, Max: 3},
				{State: ConfirmNotReproduced, Passed: 2, Of: 2, Max: 3},
				nil,
			},
			st: []Status{Flaky, Flaky, Fail}, // the consistency failure stays red
		},
		{
			name:    "persistent: reproduced, stopped early",
			confirm: []RequestResult{conf(e2e(Fail), mem(Pass))},
			note:    "stopped early",
			flaky:   true,
			want: []*Confirmation{
				{State: ConfirmReproduced, Failed: 1, Of: 1, Max: 3, Note: "stopped early"},
				{State: ConfirmNotReproduced, Passed: 1, Of: 1, Max: 3, Note: "stopped early"},
				nil,
			},
			st: []Status{Fail, Flaky, Fail},
		},
		{
			name:    "crash: inconclusive, never a pass",
			confirm: []RequestResult{conf(e2e(Pass), mem(Pass)), crash},
			note:    "the server died during confirmation request 2/3",
			flaky:   true,
			want: []*Confirmation{
				{State: confirmInconclusive, Passed: 1, Unmeasured: 1, Of: 2, Max: 3, Note: "the server died during confirmation request 2/3"},
				{State: confirmInconclusive, Passed: 1, Unmeasured: 1, Of: 2, Max: 3, Note: "the server died during confirmation request 2/3"},
				nil,
			},
			st: []Status{Fail, Fail, Fail},
		},
		{
			name:  "none sent",
			flaky: true,
			want: []*Confirmation{
				{State: confirmInconclusive, Max: 3, Note: "no confirmation request was sent"},
				{State: confirmInconclusive, Max: 3, Note: "no confirmation request was sent"},
				nil,
			},
			st: []Status{Fail, Fail, Fail},
		},
		{
			name:    "reproduced once of two",
			confirm: []RequestResult{conf(e2e(Pass), mem(Fail)), conf(e2e(Fail), mem(Skip))},
			want: []*Confirmation{
				{State: ConfirmReproduced, Failed: 1, Passed: 1, Of: 2, Max: 3},
				{State: ConfirmReproduced, Failed: 1, Unmeasured: 1, Of: 2, Max: 3},
				nil,
			},
			st: []Status{Fail, Fail, Fail},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs := []RequestResult{
				{Index: 1, Checks: []Check{e2e(Pass), mem(Pass), over(ConsistencySSIM, "", Fail)}},
				{Index: 2, Checks: []Check{e2e(Fail), mem(Fail)}},
			}
			targets := ConfirmTargets(reqs)
			if len(targets) != 2 {
				t.Fatalf("targets %v, want e2e and memory (consistency is not confirmable)", targets)
			}
			given := reqs
			reqs, _, _ = LabelConfirmed(reqs, targets, tt.confirm, 3, tt.note, tt.flaky)
			if given[1].Checks[0].Confirm != nil || given[1].Checks[0].Status != Fail {
				t.Errorf("LabelConfirmed changed the requests it was given: %+v", given[1].Checks[0])
			}
			got := []*Confirmation{reqs[1].Checks[0].Confirm, reqs[1].Checks[1].Confirm, reqs[0].Checks[2].Confirm}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			st := []Status{reqs[1].Checks[0].Status, reqs[1].Checks[1].Status, reqs[0].Checks[2].Status}
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
	targets := ConfirmTargets([]RequestResult{{Checks: []Check{over(PerfE2E, "", Fail), over(PerfDenoiseAvg, "", Fail)}}})
	one := RequestResult{Checks: []Check{over(PerfE2E, "", Fail), over(PerfDenoiseAvg, "", Pass)}}
	two := RequestResult{Checks: []Check{over(PerfE2E, "", Pass), over(PerfDenoiseAvg, "", Fail)}}
	if Reproduced(targets, []RequestResult{one}) {
		t.Errorf("Reproduced after one of two checks failed again: want false")
	}
	if !Reproduced(targets, []RequestResult{one, two}) {
		t.Errorf("Reproduced after both failed again: want true")
	}
}

func TestConfirmationText(t *testing.T) {
	tests := []struct {
		c    Confirmation
		want string
	}{
		{Confirmation{State: ConfirmReproduced, Failed: 2, Of: 2, Max: 2}, "reproduced in 2/2 confirmation requests"},
		{Confirmation{State: ConfirmNotReproduced, Passed: 2, Of: 2, Max: 2}, "not reproduced in 0/2 confirmation requests"},
		{
			Confirmation{State: confirmInconclusive, Unmeasured: 1, Of: 1, Max: 2, Note: "the server died"},
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
	fl := func(name string) Check {
		c := over(name, "", Flaky)
		c.Confirm = &Confirmation{State: ConfirmNotReproduced, Passed: 2, Of: 2, Max: 2}
		return c
	}
	res := Result{Cases: []CaseResult{{Requests: []RequestResult{
		{Checks: []Check{fl(PerfE2E), fl(PerfDenoiseAvg), fl(PerfStagePrefix + "DenoisingStage")}},
		{Checks: []Check{over(PerfE2E, "", Pass)}},
	}}}}
	if got, want := FlakyNote(res), "1 flaky: perf.e2e not reproduced in 0/2 (+2 more checks)"; got != want {
		t.Errorf("FlakyNote = %q, want %q", got, want)
	}
	res.Cases[0].Requests[0].Checks = res.Cases[0].Requests[0].Checks[:1]
	if got, want := FlakyNote(res), "1 flaky: perf.e2e not reproduced in 0/2"; got != want {
		t.Errorf("FlakyNote = %q, want %q", got, want)
	}
	if got := FlakyNote(Result{}); got != "" {
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
	failed := []Check{over(PerfE2E, "", Fail), over(PerfDenoiseAvg, "", Fail), over(MemoryRuntimePeak, "", Fail)}
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
			reqs := []RequestResult{{Index: tt.req, Checks: MarkKnown(entries, tt.id, tt.req, failed, today)}}
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
