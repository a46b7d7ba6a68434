package results

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/judge"
)

// outcomeView is what the tests compare of a KnownOutcome.
type outcomeView struct {
	State  string
	Checks []string
	Hit    []int
	Of     int
}

func TestKnownOutcomes(t *testing.T) {
	audio := func(i int, rmsFails bool) checks.RequestResult {
		rms := checks.Check{Name: checks.AudioRMSdBDiff, Status: checks.Pass}
		if rmsFails {
			rms.Status = checks.Fail
		}
		return checks.RequestResult{Index: i, Of: 3, Checks: []checks.Check{{Name: checks.ServerAlive, Status: checks.Pass},
			{Name: checks.AudioSpectralSimilarity, Status: checks.Pass}, rms}}
	}
	entries := []checks.KnownEntry{{Case: "wan", Check: "audio.*", Reason: "AAC encoder", Until: "2026-09-30", Source: "known.yaml:3"}}
	today := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	run := func(parts ...[]checks.RequestResult) []checks.Result {
		var out []checks.Result
		for i, reqs := range parts {
			r := checks.Result{Lane: "base", Partition: checks.Partition{Index: i, Total: len(parts)}, Cases: []checks.CaseResult{{ID: "wan", Requests: reqs}}}
			applyKnown(&r, entries, today)
			judge.Finalize(&r)
			out = append(out, r)
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		parts [][]checks.RequestResult
		want  []outcomeView
		line  string
	}{
		{"drift in request 3", [][]checks.RequestResult{{audio(1, false), audio(2, false), audio(3, true)}},
			[]outcomeView{{checks.KnownStateKnown, []string{checks.AudioRMSdBDiff}, []int{3}, 3}},
			"wan (known.yaml:3): known failure, audio.rms_db_diff failed in 1 of 3 requests"},
		{"passes everywhere", [][]checks.RequestResult{{audio(1, false), audio(2, false), audio(3, false)}},
			[]outcomeView{{checks.KnownStateFixed, []string{checks.AudioSpectralSimilarity, checks.AudioRMSdBDiff}, nil, 3}},
			"wan (known.yaml:3): audio.spectral_similarity and audio.rms_db_diff passed in every request the entry covers (3): fixed, remove it from the list"},
		// The same case in two partitions (results of two runs): a failure in either keeps it known.
		{"fails in the other partition", [][]checks.RequestResult{{audio(1, false)}, {audio(2, true)}},
			[]outcomeView{{checks.KnownStateKnown, []string{checks.AudioRMSdBDiff}, []int{2}, 2}},
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
	glob := []checks.KnownEntry{{Case: "*", Check: "audio.*", Reason: "AAC", Source: "known.yaml:9"}}
	var parts []checks.Result
	for i, c := range []checks.CaseResult{{ID: "a", Requests: []checks.RequestResult{audio(1, false)}}, {ID: "b",
		Requests: []checks.RequestResult{audio(1, true)}}} {
		p := checks.Result{Lane: "base", Partition: checks.Partition{Index: i, Total: 2}, Cases: []checks.CaseResult{c}}
		applyKnown(&p, glob, today)
		parts = append(parts, p)
	}
	if o := KnownOutcomes(parts...); len(o) != 1 || o[0].Case != "b" || o[0].State != checks.KnownStateKnown {
		t.Errorf("glob entry: %+v", o)
	}
	if o := KnownOutcomes(parts[0]); len(o) != 1 || o[0].State != checks.KnownStateFixed {
		t.Errorf("glob entry, partition 0 alone: %+v", o)
	}
	// An expired entry wins over known in another request: the failure counts.
	r := checks.Result{Cases: []checks.CaseResult{{ID: "wan", Requests: []checks.RequestResult{audio(1, true), audio(2, true)}}}}
	applyKnown(&r, entries, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	if o := KnownOutcomes(r); len(o) != 1 || o[0].State != checks.KnownStateExpired || len(o[0].Hit) != 2 {
		t.Errorf("expired: %+v", o)
	}
}

// TestKnownOutcomesOfAndState: the case level counts as a request only when no request was
// checked, an expired entry outranks a known one met before it, and a failure forgets the
// names of the checks that passed before it.
func TestKnownOutcomesOfAndState(t *testing.T) {
	marked := func(name string, st checks.Status, state string) checks.Check {
		return checks.Check{Name: name, Status: st, Known: &checks.KnownFailure{Reason: "r", Entry: "known.yaml:1", State: state}}
	}
	for _, tt := range []struct {
		name string
		c    checks.CaseResult
		want outcomeView
	}{
		{"case level alone counts as one",
			checks.CaseResult{ID: "a", Checks: []checks.Check{marked(checks.MemoryLoadPeak, checks.Known, checks.KnownStateKnown)}},
			outcomeView{checks.KnownStateKnown, []string{checks.MemoryLoadPeak}, []int{0}, 1}},
		{"case level beside requests is not a request",
			checks.CaseResult{ID: "a", Checks: []checks.Check{marked(checks.MemoryLoadPeak, checks.Pass, checks.KnownStateFixed)},
				Requests: []checks.RequestResult{
					{Index: 1, Checks: []checks.Check{marked(checks.PerfE2E, checks.Pass, checks.KnownStateFixed)}},
					{Index: 2, Checks: []checks.Check{marked(checks.PerfE2E, checks.Pass, checks.KnownStateFixed)}},
				}},
			outcomeView{checks.KnownStateFixed, []string{checks.MemoryLoadPeak, checks.PerfE2E}, nil, 2}},
		{"expired after known, failures sorted, passing names forgotten",
			checks.CaseResult{ID: "a", Requests: []checks.RequestResult{
				{Index: 3, Checks: []checks.Check{marked(checks.PerfDenoiseAvg, checks.Pass, checks.KnownStateFixed), marked(checks.PerfE2E, checks.Known,
					checks.KnownStateKnown)}},
				{Index: 1, Checks: []checks.Check{marked(checks.PerfE2E, checks.Fail, checks.KnownStateExpired)}},
				{Index: 2, Checks: []checks.Check{marked(checks.PerfE2E, checks.Known, checks.KnownStateKnown)}},
			}},
			outcomeView{checks.KnownStateExpired, []string{checks.PerfE2E}, []int{1, 2, 3}, 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os := KnownOutcomes(checks.Result{Lane: "base", Cases: []checks.CaseResult{tt.c}})
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
func applyKnown(res *checks.Result, entries []checks.KnownEntry, today time.Time) (unused []checks.KnownEntry) {
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
