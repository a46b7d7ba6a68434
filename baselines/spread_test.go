package baselines

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

func spreadResult(id string, totals ...float64) *results.Result {
	cr := results.CaseResult{ID: id}
	for i, v := range totals {
		cr.Requests = append(cr.Requests, results.RequestResult{
			Index: i + 1, Of: len(totals), ServerTotalMs: v,
			Stages:      results.Stages{{Name: "DenoisingStage", Ms: v / 2}},
			StepsMs:     []float64{v / 10, v / 20},
			PeakVRAMMiB: map[string]float64{checks.SourceServerReserved: 1000 + v, "nvml_process:1": 5},
		})
	}
	return &results.Result{GPU: "h200", Cases: []results.CaseResult{cr}}
}

func TestRegenerateSpread(t *testing.T) {
	base := &SpreadFile{Schema: SpreadSchema, GPU: "h200", Scenarios: map[string]map[string]results.Spread{
		"kept":  {checks.PerfE2E: {N: 1, Min: 5, Median: 5, Max: 5}},
		"fresh": {checks.PerfE2E: {N: 1, Min: 1, Median: 1, Max: 1}},
	}}
	// Two partitions of "fresh": 100, 104, 102 and 130 (one outlier).
	got := RegenerateSpread(base, "", []*results.Result{spreadResult("fresh", 100, 104), spreadResult("fresh", 102, 130)})
	want := map[string]results.Spread{
		checks.PerfE2E: {N: 4, Min: 100, Median: 103, Max: 130, MAD: 2},
		checks.PerfStagePrefix + "DenoisingStage":              {N: 4, Min: 50, Median: 51.5, Max: 65, MAD: 1},
		checks.PerfStepPrefix + "0":                            {N: 4, Min: 10, Median: 10.3, Max: 13, MAD: 0.2},
		checks.PerfStepPrefix + "1":                            {N: 4, Min: 5, Median: 5.15, Max: 6.5, MAD: 0.1},
		checks.PerfDenoiseAvg:                                  {N: 4, Min: 7.5, Median: 7.725, Max: 9.75, MAD: 0.15},
		checks.PerfDenoiseMedian:                               {N: 4, Min: 7.5, Median: 7.725, Max: 9.75, MAD: 0.15},
		SpreadKey(checks.MemoryRuntimePeak, "server_reserved"): {N: 4, Min: 1100, Median: 1103, Max: 1130, MAD: 2},
	}
	approx := cmp.Comparer(func(a, b float64) bool { return a == b || (a-b)*(a-b) < 1e-18 })
	if diff := cmp.Diff(want, got.Scenarios["fresh"], approx); diff != "" {
		t.Errorf("fresh scenario (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(base.Scenarios["kept"], got.Scenarios["kept"]); diff != "" {
		t.Errorf("a scenario the results did not measure must be kept (-want +got):\n%s", diff)
	}
	if got.GPU != "h200" || got.Schema != SpreadSchema {
		t.Errorf("gpu %q schema %q", got.GPU, got.Schema)
	}
	if RegenerateSpread(nil, "h200", []*results.Result{{Cases: []results.CaseResult{{ID: "x"}}}}) != nil {
		t.Errorf("nothing measured and no base: want nil")
	}
}

func TestSpreadRoundTrip(t *testing.T) {
	f := RegenerateSpread(nil, "h200", []*results.Result{spreadResult("t2i", 100, 110, 90)})
	data, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "h200"+SpreadSuffix)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := LoadSpread(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Path = path
	if diff := cmp.Diff(f, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if s := back.For("t2i", checks.PerfE2E, ""); s == nil || *s != (results.Spread{N: 3, Min: 90, Median: 100, Max: 110, MAD: 10}) {
		t.Errorf("For(t2i, perf.e2e) = %+v", s)
	}
	if s := back.For("t2i", checks.MemoryRuntimePeak, checks.SourceServerReserved); s == nil || s.Median != 1100 {
		t.Errorf("For(t2i, memory.runtime_peak, server_reserved) = %+v", s)
	}
	if back.For("t2i", checks.PerfLoad, "") != nil || back.For("other", checks.PerfE2E, "") != nil || (*SpreadFile)(nil).For("t2i", checks.PerfE2E, "") != nil {
		t.Errorf("For without data: want nil")
	}
	if again, _ := back.Marshal(); string(again) != string(data) {
		t.Errorf("Marshal after a round trip differs:\n%s\nwant\n%s", again, data)
	}
}

func TestLoadSpreadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadSpread(filepath.Join(dir, "none"+SpreadSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want os.ErrNotExist", err)
	}
	tests := []struct{ name, data, want string }{
		{"not JSON", "{", "x.spread.json: not a spread file: unexpected EOF"},
		{"unknown field", `{"schema":"diffusion-check/spread/v1","scenarios":{},"extra":1}`, `x.spread.json: not a spread file: json: unknown field "extra"`},
		{"wrong schema", `{"schema":"other","scenarios":{}}`, `x.spread.json: schema "other", want "diffusion-check/spread/v1"`},
		{"two objects", `{"schema":"diffusion-check/spread/v1"} {}`, "x.spread.json: not a spread file: data after the JSON object"},
		{"bad spreads", `{"schema":"diffusion-check/spread/v1","scenarios":{"a":{
			"perf.e2e":{"n":0,"min":1,"median":1,"max":1,"mad":0},
			"perf.denoise_avg":{"n":2,"min":3,"median":1,"max":4,"mad":0},
			"perf.step.0":{"n":2,"min":1,"median":1,"max":1,"mad":-1}}}}`,
			"x.spread.json: scenarios.a.perf.denoise_avg: want min ≤ median ≤ max, got 3, 1, 4\n" +
				"x.spread.json: scenarios.a.perf.e2e: n must be ≥ 1, got 0\n" +
				"x.spread.json: scenarios.a.perf.step.0: mad must not be negative, got -1"},
	}
	for _, tt := range tests {
		_, err := parseSpread("x.spread.json", []byte(tt.data))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: error %v\nwant %s", tt.name, err, tt.want)
		}
	}
}

// TestFindIgnoresSpread checks that a spread sidecar beside the baseline files is never
// taken for one: not as the file of a GPU class, not when named directly.
func TestFindIgnoresSpread(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"h200.json", "h200" + SpreadSuffix} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := Find(dir, "H200"); err != nil || got != filepath.Join(dir, "h200.json") {
		t.Errorf("Find(dir, H200) = %q, %v", got, err)
	}
	if _, err := Find(dir, "h200.spread"); err == nil || !strings.Contains(err.Error(), "names the spread file") {
		t.Errorf("Find(dir, h200.spread) = %v, want an error naming the spread file", err)
	}
	if _, err := Find(filepath.Join(dir, "h200"+SpreadSuffix), ""); err == nil || !strings.Contains(err.Error(), "is a spread file (the sidecar of") {
		t.Errorf("Find(spread file) = %v, want an error", err)
	}
	if got := SpreadPath("perf_baselines/h200.json"); got != "perf_baselines/h200.spread.json" {
		t.Errorf("SpreadPath = %q", got)
	}
}
