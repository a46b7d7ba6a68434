package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/results"
)

// simulationSuite has a reuse server shared by three cases, a server per case, and a case that
// crashes on its second request, so the verdict has something to agree on.
const simulationSuite = `
name: simulation
servers:
  warm: {builtin: {step_ms: 1, load_ms: 10}, reuse: true}
  cold: {builtin: {step_ms: 1, load_ms: 10}}
  crashy: {builtin: {step_ms: 1, load_ms: 10, faults: [crash-at=2]}}
cases:
  - {id: w1, server: warm, modality: image, repeat: 2, estimate: 40s, request: {prompt: one, size: 64x64}}
  - {id: w2, server: warm, modality: image, repeat: 2, estimate: 30s, request: {prompt: two, size: 64x64}}
  - {id: c1, server: cold, modality: image, repeat: 2, estimate: 50s, request: {prompt: three, size: 64x64}}
  - {id: c2, server: cold, modality: video, repeat: 2, estimate: 60s, request: {prompt: four, size: 64x64, fps: 8, num_frames: 8}}
  - {id: boom, server: crashy, modality: image, repeat: 2, estimate: 45s, request: {prompt: five, size: 64x64}}
  - {id: w3, server: warm, modality: image, repeat: 2, estimate: 20s, request: {prompt: six, size: 64x64}}
`

// TestPartitionedRunEqualsSingleRun is the local simulation of a GitHub matrix: plan three
// partitions, run the three `run --partition` processes at once, merge them, and compare the
// merged verdict and per-request checks with one unpartitioned run (timings aside). Then it
// drops a partition and checks that the lane becomes an error naming the missing cases.
func TestPartitionedRunEqualsSingleRun(t *testing.T) {
	t.Parallel() // self-contained: its servers and ffmpeg run beside the others' (TestMain)
	dir := t.TempDir()
	suitePath := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(suitePath, []byte(simulationSuite), 0o644); err != nil {
		t.Fatal(err)
	}
	cli := binCLI(t, dir, os.Environ)
	planJSON, code := cli("plan", "--suite", suitePath, "--partitions", "3")
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, planJSON)
	}
	if err := os.WriteFile(filepath.Join(dir, "plan.json"), []byte(planJSON[:strings.LastIndex(planJSON, "}")+1]), 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	outs := make([]string, 3)
	for i := range 3 {
		wg.Go(func() {
			outs[i], _ = cli("run", "--suite", suitePath, "--plan", "plan.json", "--partition", fmt.Sprintf("%d/3", i), "--out", fmt.Sprintf("results-%d", i))
		})
	}
	wg.Wait()
	if out, _ := cli("run", "--suite", suitePath, "--out", "single"); !strings.Contains(out, "boom") {
		t.Fatalf("single run:\n%s", out)
	}

	var parts []results.Input
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("results-%d", i), "results.json")
		r, err := results.ReadContext(t.Context(), p)
		if err != nil {
			t.Fatalf("partition %d: %v\n%s", i, err, outs[i])
		}
		parts = append(parts, results.Input{File: p, Result: r})
	}
	merged, err := mergeLanes(parts) // as report merges them: each lane judged
	if err != nil {
		t.Fatal(err)
	}
	single, err := results.ReadContext(t.Context(), filepath.Join(dir, "single", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(merged) != 1 {
		t.Fatalf("%d merged lanes, want 1", len(merged))
	}
	if diff := cmp.Diff(verdicts(single), verdicts(&merged[0])); diff != "" {
		t.Errorf("merged partitions differ from the single run (-single +merged):\n%s", diff)
	}
	if merged[0].Status != results.Fail || single.Status != results.Fail {
		t.Errorf("statuses: merged %s, single %s; want fail (boom crashes on request 2/2)", merged[0].Status, single.Status)
	}
	if len(merged[0].Errors) > 0 {
		t.Errorf("complete merge has errors: %q", merged[0].Errors)
	}

	// The artifact of one partition never arrived: the lane is an error that names the missing
	// cases. Drop the partition that holds the crashing case, so that nothing else fails.
	planned := parts[0].Result.Planned
	drop := slices.IndexFunc(planned, func(cases []string) bool { return slices.Contains(cases, "boom") })
	var keep []string
	for i := range 3 {
		if i != drop {
			keep = append(keep, fmt.Sprintf("results-%d", i))
		}
	}
	out, code := cli(append([]string{"report"}, keep...)...)
	if code != 3 {
		t.Errorf("report without partition %d: exit %d, want 3 (error)\n%s", drop, code, out)
	}
	want := fmt.Sprintf("partition %d/3 of plan %s never reported: its cases %s did not run", drop, parts[0].Result.PlanHash, strings.Join(planned[drop], ", "))
	if !strings.Contains(out, want) {
		t.Errorf("report output does not say %q:\n%s", want, out)
	}
}

// verdicts is a run's outcome without timings: case → request statuses and check verdicts.
func verdicts(r *results.Result) map[string][]string {
	out := map[string][]string{}
	for _, c := range r.Cases {
		var v []string
		v = append(v, "case "+string(c.Status))
		for _, ck := range c.Checks {
			// Load-time checks belong to the case that paid the server start, which depends on
			// the split (a reuse server starts once per partition): not part of the verdict
			// that must agree.
			if ck.Name == results.ServerAlive {
				v = append(v, "case check "+ck.Name+" "+string(ck.Status))
			}
		}
		for _, rr := range c.Requests {
			var names []string
			for _, ck := range rr.Checks {
				names = append(names, ck.Name+"="+string(ck.Status))
			}
			slices.Sort(names)
			v = append(v, fmt.Sprintf("request %d/%d %s %s", rr.Index, rr.Of, rr.Status, strings.Join(names, " ")))
		}
		out[c.ID] = v
	}
	return out
}
