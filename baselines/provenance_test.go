package baselines

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/results"
)

func measuredRequest(i, of int, st results.Status) results.RequestResult {
	return results.RequestResult{Index: i, Of: of, Status: st, ServerTotalMs: 100, Checks: []results.Check{{Name: results.OutputPresent, Status: st}}}
}

// TestUnfit: a case unfit for a baseline is named with why, from its judged status (the
// results are judged when read) and its requests.
func TestUnfit(t *testing.T) {
	part := func(cases ...results.CaseResult) *results.Result {
		return &results.Result{Lane: "base", Partition: results.Partition{Index: 0, Total: 1}, Cases: cases}
	}
	pass := results.CaseResult{ID: "ok", Status: results.Pass, Requests: []results.RequestResult{measuredRequest(1, 2, results.Pass), measuredRequest(2, 2,
		results.Pass)}}
	hung := results.CaseResult{ID: "hung", Status: results.Fail, Requests: []results.RequestResult{
		measuredRequest(1, 3, results.Pass),
		{
			Index:  2,
			Of:     3,
			Status: results.Fail,
			Checks: []results.Check{{Name: results.ServerAlive, Status: results.Pass}, {Name: results.OutputPresent, Status: results.Fail}},
		},
		{Index: 3, Of: 3, Status: results.Skip, Checks: []results.Check{{Name: results.ServerAlive, Status: results.Skip}}},
	}}
	short := results.CaseResult{ID: "short", Status: results.Pass, Requests: []results.RequestResult{measuredRequest(1, 3, results.Pass)}}
	noPerf := results.CaseResult{
		ID:     "noperf",
		Status: results.Pass,
		Requests: []results.RequestResult{
			measuredRequest(1, 2, results.Pass),
			{Index: 2, Of: 2, Status: results.Pass, Checks: []results.Check{{Name: results.OutputPresent, Status: results.Pass},
				{Name: results.PerfRecord, Status: results.Fail, Detail: "no record within 30s"}}},
		},
	}
	// checks.perf_record off (a server without performance.log): nothing asked, nothing missing.
	memoryOnly := results.CaseResult{
		ID:     "memonly",
		Status: results.Pass,
		Requests: []results.RequestResult{
			{Index: 1, Of: 1, Status: results.Pass, PeakVRAMMiB: map[string]float64{"nvml_process": 4000},
				Checks: []results.Check{{Name: results.PerfRecord, Status: results.Skip, Detail: "disabled by the case's checks.perf_record"}}},
		},
	}
	for _, tc := range []struct {
		name string
		runs []*results.Result
		want []string
	}{
		{"all passed and measured", []*results.Result{part(pass)}, nil},
		{"a hung request", []*results.Result{part(pass, hung)}, []string{`lane "base" partition 0/1 case hung: fail (request 2/3 fail: output.present fail)`}},
		{"fewer requests than asked", []*results.Result{part(short)}, []string{`lane "base" partition 0/1 case short: incomplete: 1 of 3 requests recorded`}},
		{"a request without perf record", []*results.Result{part(noPerf)},
			[]string{`lane "base" partition 0/1 case noperf: incomplete: request(s) [2] of 2 have no perf record`}},
		{"perf records not asked for", []*results.Result{part(memoryOnly)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Unfit(tc.runs)); diff != "" {
				t.Errorf("Unfit (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSources(t *testing.T) {
	a := results.CaseResult{ID: "a", Requests: []results.RequestResult{measuredRequest(1, 3, results.Pass), measuredRequest(2, 3, results.Pass),
		{Index: 3, Of: 3}}}
	b := results.CaseResult{ID: "b", Requests: []results.RequestResult{measuredRequest(1, 1, results.Pass)}}
	got := Sources([]*results.Result{{Cases: []results.CaseResult{a, b}}, {Cases: []results.CaseResult{a}}})
	want := map[string]Source{"a": {Requests: 4, Partitions: 2}, "b": {Requests: 1, Partitions: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sources (-want +got):\n%s", diff)
	}
	if got, want := got["b"].String(), "1 request × 1 partition"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
