package checks

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestApplyKnown(t *testing.T) {
	res := &Result{Cases: []CaseResult{{
		ID:     "wan",
		Checks: []Check{{Name: "perf.load", Status: Fail}},
		Requests: []RequestResult{
			{Index: 1, Checks: []Check{{Name: "perf.stage.DecodingStage", Status: Pass}, {Name: "perf.e2e", Status: Fail}}},
			{
				Index: 2,
				Checks: []Check{
					{Name: "perf.stage.DecodingStage", Status: Fail},
					{Name: "memory.runtime_peak", Status: Fail},
					{Name: "output.valid", Status: Error},
				},
			},
		},
	}, {
		ID:       "flux",
		Requests: []RequestResult{{Index: 1, Checks: []Check{{Name: "perf.e2e", Status: Fail}}}},
	}}}
	entries := []KnownEntry{
		{Case: "wan", Check: "perf.stage.*", Reason: "VAE tiling", Link: "https://x/1", Until: "2026-09-30", Source: "k.yaml:1"},
		{Case: "wan", Check: "memory.*", Request: 2, Reason: "leak", Until: "2026-01-01", Source: "k.yaml:5"},
		{Case: "w*", Check: "output.valid", Reason: "errors are never hidden", Source: "k.yaml:9"},
		{Case: "flux", Check: "perf.e2e", Request: 3, Reason: "only request 3", Source: "k.yaml:12"},
		{Case: "gone", Check: "*", Reason: "unused", Source: "k.yaml:15"},
	}
	unused := applyKnown(res, entries, time.Date(2026, 8, 16, 23, 0, 0, 0, time.UTC))
	type got struct {
		Status Status
		State  string
	}
	state := func(c Check) got {
		g := got{Status: c.Status}
		if c.Known != nil {
			g.State = c.Known.State
		}
		return g
	}
	wan := res.Cases[0]
	for name, tt := range map[string]struct{ c, want got }{
		"case-level perf.load: no entry":         {state(wan.Checks[0]), got{Fail, ""}},
		"request 1 DecodingStage passes: fixed":  {state(wan.Requests[0].Checks[0]), got{Pass, "fixed"}},
		"request 1 e2e: no entry":                {state(wan.Requests[0].Checks[1]), got{Fail, ""}},
		"request 2 DecodingStage: known":         {state(wan.Requests[1].Checks[0]), got{Known, "known"}},
		"request 2 memory: expired":              {state(wan.Requests[1].Checks[1]), got{Fail, "expired"}},
		"errors are not hidden":                  {state(wan.Requests[1].Checks[2]), got{Error, ""}},
		"flux request 1: entry is for request 3": {state(res.Cases[1].Requests[0].Checks[0]), got{Fail, ""}},
	} {
		if tt.c != tt.want {
			t.Errorf("%s: got %+v, want %+v", name, tt.c, tt.want)
		}
	}
	if k := wan.Requests[1].Checks[0].Known; k.Reason != "VAE tiling" || k.Link != "https://x/1" || k.Until != "2026-09-30" {
		t.Errorf("Known = %+v", k)
	}
	var names []string
	for _, e := range unused {
		names = append(names, e.Source)
	}
	if !cmp.Equal(names, []string{"k.yaml:12", "k.yaml:15"}) {
		t.Errorf("unused %v", names)
	}
	// Only-known failures make a known request; the expired one still fails the case.
	Finalize(res)
	if res.Cases[0].Requests[1].Status != Fail || res.Cases[0].Status != Fail {
		t.Errorf("expired entry must fail: %s %s", res.Cases[0].Requests[1].Status, res.Cases[0].Status)
	}
	r2 := &Result{
		Cases: []CaseResult{
			{
				ID:       "wan",
				Requests: []RequestResult{{Index: 1, Checks: []Check{{Name: "server.alive", Status: Pass}, {Name: "perf.stage.DecodingStage", Status: Fail}}}},
			},
		},
	}
	applyKnown(r2, entries[:1], time.Date(2026, 9, 30, 12, 0, 0, 0, time.UTC)) // until is inclusive
	Finalize(r2)
	if r2.Status != Known || ExitCode(r2.Status) != 0 {
		t.Errorf("known failure on its last day: run %s", r2.Status)
	}
}

// TestKnownOutcomes is the scenario of a drift that hits only request 3 of 3 under one entry
// `audio.*`: the entry is known (hit 1 of 3) and told once, not "fixed" for requests 1–2;
// "fixed" needs a pass in every request of every partition.
// outcomeView is what the tests compare of a KnownOutcome.
type outcomeView struct {
	State  string
	Checks []string
	Hit    []int
	Of     int
}

func TestKnownOutcomes(t *testing.T) {
	audio := func(i int, rmsFails bool) RequestResult {
		rms := Check{Name: AudioRMSdBDiff, Status: Pass}
		if rmsFails {
			rms.Status = Fail
		}
		return RequestResult{Index: i, Of: 3, Checks: []Check{{Name: ServerAlive, Status: Pass}, {Name: AudioSpectralSimilarity, Status: Pass}, rms}}
	}
	entries := []KnownEntry{{Case: "wan", Check: "audio.*", Reason: "AAC encoder", Until: "2026-09-30", Source: "known.yaml:3"}}
	today := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	run := func(parts ...[]RequestResult) []Result {
		var out []Result
		for i, reqs := range parts {
			r := Result{Lane: "base", Partition: Partition{Index: i, Total: len(parts)}, Cases: []CaseResult{{ID: "wan", Requests: reqs}}}
			applyKnown(&r, entries, today)
			Finalize(&r)
			out = append(out, r)
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		parts [][]RequestResult
		want  []outcomeView
		line  string
	}{
		{"drift in request 3", [][]RequestResult{{audio(1, false), audio(2, false), audio(3, true)}},
			[]outcomeView{{KnownStateKnown, []string{AudioRMSdBDiff}, []int{3}, 3}},
			"wan (known.yaml:3): known failure, audio.rms_db_diff failed in 1 of 3 requests"},
		{"passes everywhere", [][]RequestResult{{audio(1, false), audio(2, false), audio(3, false)}},
			[]outcomeView{{KnownStateFixed, []string{AudioSpectralSimilarity, AudioRMSdBDiff}, nil, 3}},
			"wan (known.yaml:3): audio.spectral_similarity and audio.rms_db_diff passed in every request the entry covers (3): fixed, remove it from the list"},
		// The same case in two partitions (results of two runs): a failure in either keeps it known.
		{"fails in the other partition", [][]RequestResult{{audio(1, false)}, {audio(2, true)}},
			[]outcomeView{{KnownStateKnown, []string{AudioRMSdBDiff}, []int{2}, 2}},
			"wan (known.yaml:3): known failure, audio.rms_db_diff failed in 1 of 2 requests"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os := KnownOutcomes(run(tt.parts...)...)
			var got []outcomeView
			for _, o := range os {
				got = append(got, outcomeView{o.State, o.Checks, o.Hit, o.Of})
				if o.Entry.State != o.State || o.Entry.Entry != "known.yaml:3" || o.Lane != "base" || o.Case != "wan" {
					t.Errorf("outcome %+v", o)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
			if len(os) == 1 && os[0].String() != tt.line {
				t.Errorf("line\n got %q\nwant %q", os[0].String(), tt.line)
			}
		})
	}
	// One glob entry on two cases, in two partitions: failing on one case, it is not "fixed"
	// on the other, where it simply passed.
	glob := []KnownEntry{{Case: "*", Check: "audio.*", Reason: "AAC", Source: "known.yaml:9"}}
	var parts []Result
	for i, c := range []CaseResult{{ID: "a", Requests: []RequestResult{audio(1, false)}}, {ID: "b", Requests: []RequestResult{audio(1, true)}}} {
		p := Result{Lane: "base", Partition: Partition{Index: i, Total: 2}, Cases: []CaseResult{c}}
		applyKnown(&p, glob, today)
		parts = append(parts, p)
	}
	if o := KnownOutcomes(parts...); len(o) != 1 || o[0].Case != "b" || o[0].State != KnownStateKnown {
		t.Errorf("glob entry: %+v", o)
	}
	if o := KnownOutcomes(parts[0]); len(o) != 1 || o[0].State != KnownStateFixed {
		t.Errorf("glob entry, partition 0 alone: %+v", o)
	}
	// An expired entry wins over known in another request: the failure counts.
	r := Result{Cases: []CaseResult{{ID: "wan", Requests: []RequestResult{audio(1, true), audio(2, true)}}}}
	applyKnown(&r, entries, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	if o := KnownOutcomes(r); len(o) != 1 || o[0].State != KnownStateExpired || len(o[0].Hit) != 2 {
		t.Errorf("expired: %+v", o)
	}
}

// TestKnownOutcomesOfAndState: the case level counts as a request only when no request was
// checked, an expired entry outranks a known one met before it, and a failure forgets the
// names of the checks that passed before it.
func TestKnownOutcomesOfAndState(t *testing.T) {
	marked := func(name string, st Status, state string) Check {
		return Check{Name: name, Status: st, Known: &KnownFailure{Reason: "r", Entry: "known.yaml:1", State: state}}
	}
	for _, tt := range []struct {
		name string
		c    CaseResult
		want outcomeView
	}{
		{"case level alone counts as one",
			CaseResult{ID: "a", Checks: []Check{marked(MemoryLoadPeak, Known, KnownStateKnown)}},
			outcomeView{KnownStateKnown, []string{MemoryLoadPeak}, []int{0}, 1}},
		{"case level beside requests is not a request",
			CaseResult{ID: "a", Checks: []Check{marked(MemoryLoadPeak, Pass, KnownStateFixed)}, Requests: []RequestResult{
				{Index: 1, Checks: []Check{marked(PerfE2E, Pass, KnownStateFixed)}},
				{Index: 2, Checks: []Check{marked(PerfE2E, Pass, KnownStateFixed)}},
			}},
			outcomeView{KnownStateFixed, []string{MemoryLoadPeak, PerfE2E}, nil, 2}},
		{"expired after known, failures sorted, passing names forgotten",
			CaseResult{ID: "a", Requests: []RequestResult{
				{Index: 3, Checks: []Check{marked(PerfDenoiseAvg, Pass, KnownStateFixed), marked(PerfE2E, Known, KnownStateKnown)}},
				{Index: 1, Checks: []Check{marked(PerfE2E, Fail, KnownStateExpired)}},
				{Index: 2, Checks: []Check{marked(PerfE2E, Known, KnownStateKnown)}},
			}},
			outcomeView{KnownStateExpired, []string{PerfE2E}, []int{1, 2, 3}, 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os := KnownOutcomes(Result{Lane: "base", Cases: []CaseResult{tt.c}})
			if len(os) != 1 {
				t.Fatalf("got %d outcomes, want 1: %+v", len(os), os)
			}
			o := os[0]
			if diff := cmp.Diff(tt.want, outcomeView{o.State, o.Checks, o.Hit, o.Of}); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			if o.Entry.State != o.State {
				t.Errorf("entry state %q, want the outcome's %q", o.Entry.State, o.State)
			}
		})
	}
}

// applyKnown applies known-failure entries to every check of res (case-level and per
// request) with MarkKnown, in place, as the judge does request by request during a run, and
// returns UnusedKnown. Statuses are not recomputed (Finalize does).
func applyKnown(res *Result, entries []KnownEntry, today time.Time) (unused []KnownEntry) {
	for ci := range res.Cases {
		cr := &res.Cases[ci]
		cr.Checks = MarkKnown(entries, cr.ID, 0, cr.Checks, today)
		for ri := range cr.Requests {
			rr := &cr.Requests[ri]
			rr.Checks = MarkKnown(entries, cr.ID, rr.Index, rr.Checks, today)
		}
	}
	return UnusedKnown(*res, entries)
}
