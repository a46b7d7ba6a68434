package checks_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"
)

func TestApplyKnown(t *testing.T) {
	res := &results.Result{Cases: []results.CaseResult{{
		ID:     "wan",
		Checks: []results.Check{{Name: "perf.load", Status: results.Fail}},
		Requests: []results.RequestResult{
			{Index: 1, Checks: []results.Check{{Name: "perf.stage.DecodingStage", Status: results.Pass}, {Name: "perf.e2e", Status: results.Fail}}},
			{
				Index: 2,
				Checks: []results.Check{
					{Name: "perf.stage.DecodingStage", Status: results.Fail},
					{Name: "memory.runtime_peak", Status: results.Fail},
					{Name: "output.valid", Status: results.Error},
				},
			},
		},
	}, {
		ID:       "flux",
		Requests: []results.RequestResult{{Index: 1, Checks: []results.Check{{Name: "perf.e2e", Status: results.Fail}}}},
	}}}
	entries := []checks.KnownEntry{
		{Case: "wan", Check: "perf.stage.*", Reason: "VAE tiling", Link: "https://x/1", Until: "2026-09-30", Source: "k.yaml:1"},
		{Case: "wan", Check: "memory.*", Request: 2, Reason: "leak", Until: "2026-01-01", Source: "k.yaml:5"},
		{Case: "w*", Check: "output.valid", Reason: "errors are never hidden", Source: "k.yaml:9"},
		{Case: "flux", Check: "perf.e2e", Request: 3, Reason: "only request 3", Source: "k.yaml:12"},
		{Case: "gone", Check: "*", Reason: "unused", Source: "k.yaml:15"},
	}
	unused := applyKnown(res, entries, time.Date(2026, 8, 16, 23, 0, 0, 0, time.UTC))
	type got struct {
		Status results.Status
		State  string
	}
	state := func(c results.Check) got {
		g := got{Status: c.Status}
		if c.Known != nil {
			g.State = c.Known.State
		}
		return g
	}
	wan := res.Cases[0]
	for name, tt := range map[string]struct{ c, want got }{
		"case-level perf.load: no entry":         {state(wan.Checks[0]), got{results.Fail, ""}},
		"request 1 DecodingStage passes: fixed":  {state(wan.Requests[0].Checks[0]), got{results.Pass, "fixed"}},
		"request 1 e2e: no entry":                {state(wan.Requests[0].Checks[1]), got{results.Fail, ""}},
		"request 2 DecodingStage: known":         {state(wan.Requests[1].Checks[0]), got{results.Known, "known"}},
		"request 2 memory: expired":              {state(wan.Requests[1].Checks[1]), got{results.Fail, "expired"}},
		"errors are not hidden":                  {state(wan.Requests[1].Checks[2]), got{results.Error, ""}},
		"flux request 1: entry is for request 3": {state(res.Cases[1].Requests[0].Checks[0]), got{results.Fail, ""}},
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
	judge.Finalize(res)
	if res.Cases[0].Requests[1].Status != results.Fail || res.Cases[0].Status != results.Fail {
		t.Errorf("expired entry must fail: %s %s", res.Cases[0].Requests[1].Status, res.Cases[0].Status)
	}
	r2 := &results.Result{
		Cases: []results.CaseResult{
			{
				ID: "wan",
				Requests: []results.RequestResult{{Index: 1, Checks: []results.Check{{Name: "server.alive", Status: results.Pass},
					{Name: "perf.stage.DecodingStage",
						Status: results.Fail}}}},
			},
		},
	}
	applyKnown(r2, entries[:1], time.Date(2026, 9, 30, 12, 0, 0, 0, time.UTC)) // until is inclusive
	judge.Finalize(r2)
	if r2.Status != results.Known {
		t.Errorf("known failure on its last day: run %s", r2.Status)
	}
}

// The known-failure entries as a lane's report tells them (results.KnownOutcomes), over
// checks that MarkKnown marked (applyKnown): the two ends of one mechanism, tested together.

// outcomeView is what the tests compare of a KnownOutcome.
type outcomeView struct {
	State  string
	Checks []string
	Hit    []int
	Of     int
}

// TestKnownOutcomes is the scenario of a drift that hits only request 3 of 3 under one entry
// `audio.*`: the entry is known (hit 1 of 3) and told once, not "fixed" for requests 1–2;
// "fixed" needs a pass in every request of every partition.
func TestKnownOutcomes(t *testing.T) {
	audio := func(i int, rmsFails bool) results.RequestResult {
		rms := results.Check{Name: checks.AudioRMSdBDiff, Status: results.Pass}
		if rmsFails {
			rms.Status = results.Fail
		}
		return results.RequestResult{Index: i, Of: 3, Checks: []results.Check{{Name: results.ServerAlive, Status: results.Pass},
			{Name: checks.AudioSpectralSimilarity, Status: results.Pass}, rms}}
	}
	entries := []checks.KnownEntry{{Case: "wan", Check: "audio.*", Reason: "AAC encoder", Until: "2026-09-30", Source: "known.yaml:3"}}
	today := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	run := func(parts ...[]results.RequestResult) []results.Result {
		var out []results.Result
		for i, reqs := range parts {
			r := results.Result{Lane: "base", Partition: results.Partition{Index: i, Total: len(parts)}, Cases: []results.CaseResult{{ID: "wan",
				Requests: reqs}}}
			applyKnown(&r, entries, today)
			judge.Finalize(&r)
			out = append(out, r)
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		parts [][]results.RequestResult
		want  []outcomeView
		line  string
	}{
		{"drift in request 3", [][]results.RequestResult{{audio(1, false), audio(2, false), audio(3, true)}},
			[]outcomeView{{results.KnownStateKnown, []string{checks.AudioRMSdBDiff}, []int{3}, 3}},
			"wan (known.yaml:3): known failure, audio.rms_db_diff failed in 1 of 3 requests"},
		{"passes everywhere", [][]results.RequestResult{{audio(1, false), audio(2, false), audio(3, false)}},
			[]outcomeView{{results.KnownStateFixed, []string{checks.AudioSpectralSimilarity, checks.AudioRMSdBDiff}, nil, 3}},
			"wan (known.yaml:3): audio.spectral_similarity and audio.rms_db_diff passed in every request the entry covers (3): fixed, remove it from the list"},
		// The same case in two partitions (results of two runs): a failure in either keeps it known.
		{"fails in the other partition", [][]results.RequestResult{{audio(1, false)}, {audio(2, true)}},
			[]outcomeView{{results.KnownStateKnown, []string{checks.AudioRMSdBDiff}, []int{2}, 2}},
			"wan (known.yaml:3): known failure, audio.rms_db_diff failed in 1 of 2 requests"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os := results.KnownOutcomes(run(tt.parts...)...)
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
	glob := []checks.KnownEntry{{Case: "*", Check: "audio.*", Reason: "AAC", Source: "known.yaml:9"}}
	var parts []results.Result
	for i, c := range []results.CaseResult{{ID: "a", Requests: []results.RequestResult{audio(1, false)}}, {ID: "b",
		Requests: []results.RequestResult{audio(1, true)}}} {
		p := results.Result{Lane: "base", Partition: results.Partition{Index: i, Total: 2}, Cases: []results.CaseResult{c}}
		applyKnown(&p, glob, today)
		parts = append(parts, p)
	}
	if o := results.KnownOutcomes(parts...); len(o) != 1 || o[0].Case != "b" || o[0].State != results.KnownStateKnown {
		t.Errorf("glob entry: %+v", o)
	}
	if o := results.KnownOutcomes(parts[0]); len(o) != 1 || o[0].State != results.KnownStateFixed {
		t.Errorf("glob entry, partition 0 alone: %+v", o)
	}
	// An expired entry wins over known in another request: the failure counts.
	r := results.Result{Cases: []results.CaseResult{{ID: "wan", Requests: []results.RequestResult{audio(1, true), audio(2, true)}}}}
	applyKnown(&r, entries, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	if o := results.KnownOutcomes(r); len(o) != 1 || o[0].State != results.KnownStateExpired || len(o[0].Hit) != 2 {
		t.Errorf("expired: %+v", o)
	}
}

// TestKnownOutcomesOfAndState: the case level counts as a request only when no request was
// checked, an expired entry outranks a known one met before it, and a failure forgets the
// names of the checks that passed before it.
func TestKnownOutcomesOfAndState(t *testing.T) {
	marked := func(name string, st results.Status, state string) results.Check {
		return results.Check{Name: name, Status: st, Known: &results.KnownFailure{Reason: "r", Entry: "known.yaml:1", State: state}}
	}
	for _, tt := range []struct {
		name string
		c    results.CaseResult
		want outcomeView
	}{
		{"case level alone counts as one",
			results.CaseResult{ID: "a", Checks: []results.Check{marked(checks.MemoryLoadPeak, results.Known, results.KnownStateKnown)}},
			outcomeView{results.KnownStateKnown, []string{checks.MemoryLoadPeak}, []int{0}, 1}},
		{"case level beside requests is not a request",
			results.CaseResult{ID: "a", Checks: []results.Check{marked(checks.MemoryLoadPeak, results.Pass, results.KnownStateFixed)},
				Requests: []results.RequestResult{
					{Index: 1, Checks: []results.Check{marked(checks.PerfE2E, results.Pass, results.KnownStateFixed)}},
					{Index: 2, Checks: []results.Check{marked(checks.PerfE2E, results.Pass, results.KnownStateFixed)}},
				}},
			outcomeView{results.KnownStateFixed, []string{checks.MemoryLoadPeak, checks.PerfE2E}, nil, 2}},
		{"expired after known, failures sorted, passing names forgotten",
			results.CaseResult{ID: "a", Requests: []results.RequestResult{
				{Index: 3, Checks: []results.Check{marked(checks.PerfDenoiseAvg, results.Pass, results.KnownStateFixed), marked(checks.PerfE2E, results.Known,
					results.KnownStateKnown)}},
				{Index: 1, Checks: []results.Check{marked(checks.PerfE2E, results.Fail, results.KnownStateExpired)}},
				{Index: 2, Checks: []results.Check{marked(checks.PerfE2E, results.Known, results.KnownStateKnown)}},
			}},
			outcomeView{results.KnownStateExpired, []string{checks.PerfE2E}, []int{1, 2, 3}, 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os := results.KnownOutcomes(results.Result{Lane: "base", Cases: []results.CaseResult{tt.c}})
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
func applyKnown(res *results.Result, entries []checks.KnownEntry, today time.Time) (unused []checks.KnownEntry) {
	for ci := range res.Cases {
		cr := &res.Cases[ci]
		cr.Checks = checks.MarkKnown(entries, cr.ID, 0, cr.Checks, today)
		for ri := range cr.Requests {
			rr := &cr.Requests[ri]
			rr.Checks = checks.MarkKnown(entries, cr.ID, rr.Index, rr.Checks, today)
		}
	}
	return checks.UnusedKnown(*res, entries)
}
