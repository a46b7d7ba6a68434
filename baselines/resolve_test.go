package baselines

import (
	"os"
	"path/filepath"
	"testing"
)

// TestResolve: one resolver chooses every data file of a run. The perf and consistency
// platforms follow their override variables, else the GPU (an H200 reads h100.json), RUNNER_NAME
// is read there alone, and the files come from the chosen platform: a folder's <platform>.json,
// the thresholds' and the ground truth's platform. An unknown override is an error naming it,
// and the result still holds the class and the runner.
func TestResolve(t *testing.T) {
	env := map[string]string{runnerEnv: "b200-di-07", PlatformConsistency.Env(): "b200"}
	r, err := Resolve(ResolveInput{Class: "h200", Major: 9, Minor: 0, Device: "NVIDIA H200", Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Perf.Name != "h100" || r.Consistency.Name != "b200" || r.Runner != "b200-di-07" || r.Class != "h200" {
		t.Errorf("resolved %+v, want perf h100 (the GPU), consistency b200 (the variable), runner b200-di-07", r)
	}
	if r.Consistency.Why != PlatformConsistency.Env()+"=b200" || r.GroundTruthPlatform() != "b200" {
		t.Errorf("consistency why %q, ground truth platform %q", r.Consistency.Why, r.GroundTruthPlatform())
	}
	dir := t.TempDir()
	for _, f := range []string{"h100.json", "b200.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if path, err := r.BaselinesFile(dir); err != nil || path != filepath.Join(dir, "h100.json") {
		t.Errorf("BaselinesFile = %q, %v; want the folder's h100.json", path, err)
	}

	env[PlatformPerf.Env()] = "nonsense"
	r, err = Resolve(ResolveInput{Class: "h200", Getenv: func(k string) string { return env[k] }})
	if err == nil || r.Class != "h200" || r.Runner != "b200-di-07" {
		t.Errorf("an unknown override: %+v, %v; want an error, the class and the runner kept", r, err)
	}
	if none, err := Resolve(ResolveInput{Class: "h100", Explicit: true}); err != nil || none.Runner != "" || none.Perf.Name != "h100" {
		t.Errorf("no environment: %+v, %v", none, err)
	}
}
