package baselines

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Rule: every platform's perf baseline also takes the scenarios of SGLang's Ascend and MUSA
// files, beside the perf_baselines folder, in that order, each replacing the scenario of its
// id whole; tolerances and sampling stay the platform file's. Source: testcase_configs.py
// BASELINE_CONFIG, BaselineConfig.update (pandalee99/sglang @ cce0a1244, 2026-08-23; web4hub/Sgl
// @ 4e66c7cc, on or after 2026-09-23). The files are SGLang's own (testdata/sglang/SOURCES.md).
func TestMergeVendorsAsSGLang(t *testing.T) {
	f, err := Load("testdata/sglang/perf_baselines/h100.json")
	if err != nil {
		t.Fatal(err)
	}
	g, err := f.MergeVendors()
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Merged) != 2 || len(g.Merged[0].Scenarios) != 12 || len(g.Merged[1].Scenarios) != 10 {
		t.Fatalf("merged %+v, want the 12 Ascend and the 10 MUSA scenarios", g.Merged)
	}
	if len(g.Scenarios) != len(f.Scenarios)+22 || len(g.Merged[0].Replaced)+len(g.Merged[1].Replaced) != 0 {
		t.Errorf("%d scenarios after the merge, want %d + 22, none replaced", len(g.Scenarios), len(f.Scenarios))
	}
	npu := g.Scenarios["flux_image_t2i_npu"]
	if npu == nil || npu.From != filepath.Join("testdata/sglang/ascend/perf_baselines_npu.json") || npu.E2EMs == nil {
		t.Fatalf("flux_image_t2i_npu: %+v", npu)
	}
	tol, err := g.Tolerances(DefaultProfile, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pb, ok := g.Perf("zimage_image_t2i_musa", tol, false); !ok || pb.E2EMs != 12161.85 {
		t.Errorf("zimage_image_t2i_musa: %v %v, want SGLang's 12161.85 ms", ok, pb.E2EMs)
	}
	if _, ok := f.Scenarios["flux_image_t2i_npu"]; ok || len(f.Merged) != 0 {
		t.Error("MergeVendors changed the file it was called on")
	}
	if !strings.Contains(g.Merged[0].String(), "perf_baselines_npu.json (12 scenarios), as SGLang merges it into every platform's file") {
		t.Errorf("message: %s", g.Merged[0])
	}
}

// The merge replaces a scenario whole, after the runner pool applied (SGLang: load, then
// update), so a pool's override of a vendor scenario is lost as it is in SGLang; a folder
// without vendor files is as it was; a vendor file that cannot be decoded fails, naming it.
func TestMergeVendorsOrderAndErrors(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("perf_baselines/h100.json", `{"tolerances": {"e2e": 0.1, "denoise_stage": 0.1, "non_denoise_stage": 0.1, "denoise_step": 0.1, "denoise_agg": 0.1},
 "sampling": {"step_fractions": [0.0]},
 "scenarios": {"a": {"expected_e2e_ms": 1.0, "expected_load_ms": 5.0}, "b": {"expected_e2e_ms": 2.0}},
 "runner_overrides": {"pool": {"a": {"expected_e2e_ms": 3.0}}}}`)
	f, err := Load(filepath.Join(root, "perf_baselines/h100.json"))
	if err != nil {
		t.Fatal(err)
	}
	if g, err := f.MergeVendors(); err != nil || len(g.Merged) != 0 || len(g.Scenarios) != 2 {
		t.Fatalf("no vendor files: %v, %+v", err, g)
	}
	write("ascend/perf_baselines_npu.json", `{"metadata": {}, "scenarios": {"a": {"expected_e2e_ms": 9.0}, "c": {"expected_e2e_ms": 4.0}}}`)
	write("musa/perf_baselines_musa.json", `{"scenarios": {"c": {"expected_e2e_ms": 6.0}}}`)
	p, err := f.ForRunner("pool-1")
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.MergeVendors()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for id, s := range g.Scenarios {
		got[id] = *s.E2EMs
	}
	if diff := cmp.Diff(map[string]float64{"a": 9, "b": 2, "c": 6}, got); diff != "" {
		t.Errorf("e2e after the pool and the merges (-want +got):\n%s", diff)
	}
	if g.Scenarios["a"].ExpectedLoadMs != nil || !g.InPool {
		t.Error("a vendor scenario replaces the platform's whole (no expected_load_ms left), and the pool stays named")
	}
	if g.Merged[0].Replaced[0] != "a" || g.Merged[1].Replaced[0] != "c" || !strings.Contains(g.Merged[0].String(), "it replaces a whole") {
		t.Errorf("replaced: %+v", g.Merged)
	}
	write("musa/perf_baselines_musa.json", `{"scenarios": {"c": {"expected_e2e_ms": "fast"}}}`)
	const malformed = "perf_baselines_musa.json:1: scenarios.c.expected_e2e_ms: want a number, got a string"
	if _, err := f.MergeVendors(); err == nil || !strings.Contains(err.Error(), malformed) {
		t.Errorf("a malformed vendor file: %v", err)
	}
	write("musa/perf_baselines_musa.json", `{"metadata": {}}`)
	const noScenarios = `scenarios: missing; SGLang's BaselineConfig.update reads the file's "scenarios"`
	if _, err := f.MergeVendors(); err == nil || !strings.Contains(err.Error(), noScenarios) {
		t.Errorf("a vendor file without scenarios: %v", err)
	}
}
