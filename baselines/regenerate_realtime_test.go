package baselines

import (
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/results"
)

// TestRegenerateRealtime: a realtime case's scenario gets its sessions' worst E2E (init sent →
// the last chunk's stats, checks.SessionE2E) as expected_e2e_ms, in the shape SGLang's loader
// reads (ScenarioConfig.from_dict, testcase_configs.py, pandalee99/sglang @ cce0a1244: stages_ms,
// denoise_step_ms and both averages are required) and its own realtime scenario has
// (h100.json lingbot_world_realtime_plastic_beach: {} stages and steps, 0.0 averages); the last
// chunk's record gives only the VRAM. A session cut short (no output) is left out. The
// regenerated file's E2E then passes the same sessions' realtime perf.e2e.
func TestRegenerateRealtime(t *testing.T) {
	session := func(i int, ms ...float64) results.RequestResult {
		rr := results.RequestResult{Case: "rt", Index: i, Of: 3, ServerTotalMs: 9, Stages: results.Stages{{Name: "DenoisingStage", Ms: 8}},
			StepsMs: []float64{2, 2}, PeakVRAMMiB: map[string]float64{checks.SourceServerReserved: 3396}, Output: &results.Output{Kind: "video"}}
		for k, v := range ms {
			rr.RealtimeChunks = append(rr.RealtimeChunks, results.ChunkStats{Index: k, SessionMs: v, ChunkTotalMs: 10})
		}
		return rr
	}
	cut := session(3, 50, 2000) // its last chunk came late, and then the session broke
	cut.Output = nil
	res := &results.Result{Cases: []results.CaseResult{{ID: "rt", WallMs: 4000, Load: &results.Load{DurationMs: 300},
		Requests: []results.RequestResult{session(1, 40, 80, 120.5), session(2, 45, 90, 130.254), cut}}}}
	reg, err := Regenerate(nil, []*results.Result{res}, RegenerateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := string(reg.File.Marshal())
	want := `        "rt": {
            "stages_ms": {},
            "denoise_step_ms": {},
            "expected_e2e_ms": 130.25,
            "expected_avg_denoise_ms": 0.0,
            "expected_median_denoise_ms": 0.0,
            "estimated_full_test_time_s": 4.0,
            "expected_load_ms": 300.0,
            "runtime_peak_vram_mb": 3396.0
        }`
	if !strings.Contains(got, want) {
		t.Errorf("regenerated scenario:\n%s\nwant:\n%s", got, want)
	}
	if src := Sources([]*results.Result{res})["rt"]; src.Requests != 2 {
		t.Errorf("sources %v, want the 2 whole sessions", src)
	}
	tol, err := reg.File.Tolerances("", nil)
	if err != nil {
		t.Fatal(err)
	}
	pb, found := reg.File.Perf("rt", tol, true)
	if !found || pb.E2EMs != 130.25 {
		t.Fatalf("scenario rt: %v %v", pb.E2EMs, found)
	}
	for _, rr := range res.Cases[0].Requests[:2] {
		if cs := checks.RealtimeE2E(rr.RealtimeChunks, pb); len(cs) != 1 || cs[0].Status != results.Pass {
			t.Errorf("request %d against the regenerated file: %+v", rr.Index, cs)
		}
	}
	// A rerun over its own output keeps what it wrote, an existing realtime scenario's other
	// keys included.
	again, err := Regenerate(reg.File, []*results.Result{res}, RegenerateOptions{})
	if err != nil || string(again.File.Marshal()) != got {
		t.Errorf("rerun changed the file: %v", err)
	}
}
