package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
)

// writeResultsFile writes res as dir/results.json, as a run's final write leaves it.
func writeResultsFile(t *testing.T, dir string, lane string) {
	t.Helper()
	res := sampleResult()
	res.Schema, res.Lane = checks.Schema, lane
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ResultsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadAll: a folder of artifact downloads is read output folder by output folder, in
// order, skipping request outputs and server logs; a lane that is no name is refused naming
// its file; a folder without results and an empty command line are errors.
func TestReadAll(t *testing.T) {
	root := t.TempDir()
	writeResultsFile(t, filepath.Join(root, "results-base-1"), "base")
	writeResultsFile(t, filepath.Join(root, "results-base-0", "out"), "base")
	writeResultsFile(t, filepath.Join(root, "results-base-0", "out", ArtifactsDir, "x"), "never read")
	inputs, warnings, err := ReadAll(t.Context(), []string{root})
	if err != nil || len(warnings) != 0 {
		t.Fatalf("ReadAll: %v, warnings %v", err, warnings)
	}
	var files []string
	for _, in := range inputs {
		files = append(files, strings.TrimPrefix(in.File, root+"/"))
	}
	if want := "results-base-0/out/results.json results-base-1/results.json"; strings.Join(files, " ") != want {
		t.Errorf("read %v, want %s", files, want)
	}

	bad := filepath.Join(t.TempDir(), "bad")
	writeResultsFile(t, bad, "base lane; rm -rf /")
	if _, _, err := ReadAll(t.Context(), []string{filepath.Join(bad, ResultsFile)}); err == nil || !strings.Contains(err.Error(), filepath.Join(bad,
		ResultsFile)+": lane:") {
		t.Errorf("a lane that is no name: %v, want a refusal naming the file", err)
	}
	empty := t.TempDir()
	if _, _, err := ReadAll(t.Context(), []string{empty}); err == nil || !strings.Contains(err.Error(), empty+": no results.json in this folder or below") {
		t.Errorf("an empty folder: %v", err)
	}
	if _, _, err := ReadAll(t.Context(), nil); err == nil {
		t.Error("no paths: no error")
	}
}
