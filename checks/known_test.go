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
