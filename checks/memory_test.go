package checks

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/results"
)

func memBaseline() MemoryBaseline {
	b := NoMemoryBaseline()
	b.LoadPeakMiB, b.RuntimePeakMiB = 13120, 24838 // docs/sglang-compat.md §4's excerpt
	return b
}

func bySource(t *testing.T, cs []results.Check) map[string]results.Check {
	t.Helper()
	out := map[string]results.Check{}
	for _, c := range cs {
		if _, dup := out[c.Source]; dup {
			t.Fatalf("two checks for source %q", c.Source)
		}
		out[c.Source] = c
	}
	return out
}

func TestMemoryLimits(t *testing.T) {
	b := memBaseline()
	b.RuntimeHostAnonMiB = 1000
	for _, tt := range []struct {
		name   string
		peaks  map[string]float64
		load   bool
		source string
		want   results.Status
		limit  float64 // NaN: no limit
	}{
		{"load at 1%", map[string]float64{"server_reserved": 13251.2}, true, "server_reserved", results.Pass, 13251.2},
		{"load over 1%", map[string]float64{"server_reserved": 13252}, true, "server_reserved", results.Fail, 13251.2},
		{"runtime at 2%", map[string]float64{"server_reserved": 25334.76}, false, "server_reserved", results.Pass, 25334.76},
		{"runtime over 2%", map[string]float64{"server_reserved": 25335}, false, "server_reserved", results.Fail, 25334.76},
		{"nvml beside reserved is recorded", map[string]float64{"server_reserved": 1, "nvml_process": 99999}, false, "nvml_process", results.Skip, math.NaN()},
		{"nvml alone is checked", map[string]float64{"nvml_process": 25400}, false, "nvml_process", results.Fail, 25334.76},
		{"nvml device recorded", map[string]float64{"server_reserved": 1, "nvml_device": 99999}, false, "nvml_device", results.Skip, math.NaN()},
		{"host anon: 256 MiB pad wins", map[string]float64{"host_anon": 1256}, false, "host_anon", results.Pass, 1256},
		{"host anon over", map[string]float64{"server_host_anon": 1257}, false, "server_host_anon", results.Fail, 1256},
		{"no measurement at all", nil, false, "", results.Fail, 25334.76},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := RuntimeMemory(tt.peaks, b)
			if tt.load {
				cs = LoadMemory(tt.peaks, b)
			}
			c, ok := bySource(t, cs)[tt.source]
			if !ok {
				t.Fatalf("no check for %q in %+v", tt.source, cs)
			}
			got := math.NaN()
			if c.Limit != nil {
				got = *c.Limit
			}
			if c.Status != tt.want || !(math.IsNaN(got) && math.IsNaN(tt.limit) || math.Abs(got-tt.limit) < 1e-9) {
				t.Errorf("%s: %s limit %v (%s), want %s limit %v", tt.source, c.Status, got, c.Detail, tt.want, tt.limit)
			}
		})
	}
	// Allocated without an allocated baseline is not checked; per-GPU sources are left to the totals.
	cs := RuntimeMemory(map[string]float64{"server_reserved": 1, "server_allocated": 5, "nvml_process:1": 3}, memBaseline())
	if len(cs) != 1 || cs[0].Source != "server_reserved" {
		t.Errorf("got %+v", cs)
	}
	// No baseline: values recorded, nothing enforced, nothing failing for lack of a number.
	if cs := RuntimeMemory(nil, NoMemoryBaseline()); len(cs) != 0 {
		t.Errorf("no baseline, no measurement: %+v", cs)
	}
}

func reqs(source string, peaks ...float64) []results.RequestResult {
	var out []results.RequestResult
	for i, p := range peaks {
		rr := results.RequestResult{Index: i + 1, Of: len(peaks), PeakVRAMMiB: map[string]float64{source: p}}
		rr.Checks = RuntimeMemory(rr.PeakVRAMMiB, memBaseline())
		out = append(out, rr)
	}
	return out
}

// growth judges every request against the one before it by index, as a run does when each
// request finishes; it returns how many checks failed.
func growth(rs []results.RequestResult, tol float64) int {
	n := 0
	for i := 1; i < len(rs); i++ {
		var grew []results.Check
		rs[i].Checks, grew = GrowthSince(rs[i].Checks, rs[i-1].PeakVRAMMiB, rs[i].PeakVRAMMiB, fmt.Sprintf("request %d", rs[i-1].Index), tol)
		n += len(grew)
	}
	return n
}

func TestGrowth(t *testing.T) {
	// Under the 24838 MiB baseline all along, but request 3 grew by 200 MiB (> 2%).
	rs := reqs("server_reserved", 3400, 3460, 3660)
	if n := growth(rs, 0.02); n != 1 {
		t.Fatalf("growth flagged %d, want 1", n)
	}
	for i, want := range []results.Status{results.Pass, results.Pass, results.Fail} {
		c := rs[i].Checks[0]
		if c.Status != want {
			t.Errorf("request %d: %s %q, want %s", i+1, c.Status, c.Detail, want)
		}
	}
	if d := rs[2].Checks[0].Detail; !strings.Contains(d, "server_reserved grew from 3460 to 3660 MiB since request 2") {
		t.Errorf("detail %q", d)
	}
	// The growth limit is the one it broke: limit, baseline (the previous peak), tolerance and
	// a short cause for the report.
	c := rs[2].Checks[0]
	if got, want := [4]float64{*c.Limit, *c.Baseline, *c.Tolerance, *c.Pad}, [4]float64{PerfLimit(3460, 0.02, 0), 3460, 0.02, 0}; got != want {
		t.Errorf("limit, baseline, tolerance, pad = %v, want %v", got, want)
	}
	// Until the next request tells growth from a spike, the words say neither.
	if c.Cause != "memory rose +200 MiB since request 2" || !strings.HasSuffix(c.Detail, ": growth or a one-off spike, the next request tells") ||
		strings.Contains(c.Detail, "grows") {
		t.Errorf("cause %q, detail %q", c.Cause, c.Detail)
	}
	// A source with no check yet (no baseline configured) gets one.
	rs = []results.RequestResult{
		{Index: 1, PeakVRAMMiB: map[string]float64{"nvml_process": 4000}},
		{Index: 2, PeakVRAMMiB: map[string]float64{"nvml_process": 4200}},
	}
	growth(rs, 0.02)
	if len(rs[1].Checks) != 1 || rs[1].Checks[0].Name != MemoryRuntimePeak || rs[1].Checks[0].Status != results.Fail ||
		rs[1].Checks[0].Source != "nvml_process" {
		t.Errorf("%+v", rs[1].Checks)
	}
	// Host memory has a 256 MiB pad; a request missing the source is not compared.
	rs = []results.RequestResult{
		{Index: 1, PeakVRAMMiB: map[string]float64{"host_anon": 2000}},
		{Index: 2, PeakVRAMMiB: map[string]float64{"host_anon": 2250}},
		{Index: 3},
		{Index: 4, PeakVRAMMiB: map[string]float64{"host_anon": 9000}},
	}
	if n := growth(rs, 0.02); n != 0 {
		t.Errorf("flagged %d: %+v", n, rs)
	}
}

// TestGrowthSinceReturnsANewSlice: the growth verdict is a returned value; the checks it was
// given (a request already judged, perhaps already written) are not rewritten under it.
func TestGrowthSinceReturnsANewSlice(t *testing.T) {
	prev, cur := map[string]float64{SourceServerReserved: 3400}, map[string]float64{SourceServerReserved: 3800}
	in := RuntimeMemory(cur, memBaseline())
	before := fmt.Sprintf("%+v", in)
	got, grew := GrowthSince(in, prev, cur, "request 1", 0.02)
	if len(grew) != 1 || got[0].Status != results.Fail || grew[0].Source != SourceServerReserved {
		t.Fatalf("GrowthSince = %+v, grew %+v; want one failure of %s", got, grew, SourceServerReserved)
	}
	if after := fmt.Sprintf("%+v", in); after != before || in[0].Status != results.Pass {
		t.Errorf("GrowthSince changed its input:\nbefore %s\nafter  %s", before, after)
	}
}

// TestSettleGrowth: a rise is worded as growth only once the next request keeps it; a next
// request back under the growth limit makes it a one-off spike in its own request; the case's
// last request says that no later request can tell. Only the words change: the verdict, the
// value and the limit stay.
func TestSettleGrowth(t *testing.T) {
	rs := reqs("nvml_process", 4000, 12192, 4010, 12300, 20500)
	growth(rs, 0.02)
	spike, rw := SettleGrowth(rs[1], &rs[2])
	c := spike.Checks[0]
	if len(rw) != 1 || rw[0].Cause != c.Cause || c.Status != results.Fail || c.Cause != "memory spike in request 2: +8192 MiB, gone by request 3" ||
		!strings.Contains(c.Detail, "grew from 4000 to 12192 MiB since request 1") ||
		!strings.Contains(c.Detail, ": a one-off spike in request 2, not growth: request 3 is back to 4010 MiB") || strings.Contains(c.Detail, "grows") {
		t.Errorf("a spike: %+v", c)
	}
	if *c.Value != 12192 || *c.Limit != PerfLimit(4000, 0.02, 0) {
		t.Errorf("the spike's value or limit changed: %+v", c)
	}
	if rs[1].Checks[0].Cause != "memory rose +8192 MiB since request 1" {
		t.Errorf("the request given was changed: %+v", rs[1].Checks[0])
	}
	kept, rw := SettleGrowth(rs[3], &rs[4])
	if c := kept.Checks[0]; len(rw) != 1 || c.Cause != "memory grows +8290 MiB per request" ||
		!strings.HasSuffix(c.Detail, "memory grows across requests: request 5 keeps it (20500 MiB)") {
		t.Errorf("growth kept: %+v", c)
	}
	last, rw := SettleGrowth(rs[4], nil)
	if c := last.Checks[0]; len(rw) != 1 || c.Cause != "memory rose +8200 MiB in request 5" ||
		!strings.Contains(c.Detail, ": a rise in request 5, the case's last, so no later request shows whether it stays") {
		t.Errorf("the last: %+v", c)
	}
	// Nothing to settle: a passing request.
	if _, rw := SettleGrowth(rs[0], &rs[1]); rw != nil {
		t.Error("a request without growth was reworded")
	}
	// Nor one already settled.
	if _, rw := SettleGrowth(spike, &rs[2]); rw != nil {
		t.Error("a settled request was reworded again")
	}
	// A next request that did not measure the source (it crashed) cannot tell: said so, now,
	// rather than left waiting for a request that will not come.
	unmeasured, rw := SettleGrowth(rs[1], &results.RequestResult{Index: 3, Of: 5})
	if c := unmeasured.Checks[0]; len(rw) != 1 || c.Cause != "memory rose +8192 MiB in request 2" ||
		!strings.HasSuffix(c.Detail, ": a rise in request 2; request 3 did not measure nvml_process, so no request shows whether it stays") {
		t.Errorf("next without the source: %+v", c)
	}
	// No later request measured (the case stopped after request 2 of 5).
	lastMeasured := ": a rise in request 2, the last of the case measured, so no later request shows whether it stays"
	if c := mustSettle(t, rs[1], nil); !strings.HasSuffix(c.Detail, lastMeasured) {
		t.Errorf("the last measured: %+v", c)
	}
	// Confirmation requests are named as such.
	conf := reqs("nvml_process", 4000, 12192, 4010)
	for i := range conf {
		conf[i].Confirm = true
	}
	growth(conf, 0.02)
	if c := mustSettle(t, conf[1], &conf[2]); c.Cause != "memory spike in confirmation request 2: +8192 MiB, gone by confirmation request 3" {
		t.Errorf("a confirmation request's spike: %+v", c)
	}
}

// mustSettle settles rr's one growth failure against next and returns it reworded.
func mustSettle(t *testing.T, rr results.RequestResult, next *results.RequestResult) results.Check {
	t.Helper()
	out, rw := SettleGrowth(rr, next)
	if len(rw) != 1 || strings.Contains(out.Checks[0].Detail, pendingWords) {
		t.Fatalf("not settled: %+v", out.Checks)
	}
	return out.Checks[0]
}
