package results_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/judge"
	"github.com/diffusion-check/diffusion-check/results"
)

// writeResultsFile writes res as dir/results.json, as a run's final write leaves it.
func writeResultsFile(t *testing.T, dir string, lane string) {
	t.Helper()
	res := &results.Result{Schema: results.Schema, Suite: "s", Lane: lane, Status: results.Pass, Partition: results.Partition{Index: 0, Total: 1},
		Cases: []results.CaseResult{{ID: "c", Status: results.Pass,
			Requests: []results.RequestResult{{Index: 1, Of: 1, Status: results.Pass, Checks: []results.Check{{Name: results.OutputPresent,
				Status: results.Pass}}}}}}}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.ResultsFile), b, 0o644); err != nil {
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
	writeResultsFile(t, filepath.Join(root, "results-base-0", "out", results.ArtifactsDir, "x"), "never read")
	inputs, warnings, err := results.ReadAll(t.Context(), []string{root})
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
	if _, _, err := results.ReadAll(t.Context(), []string{filepath.Join(bad, results.ResultsFile)}); err == nil || !strings.Contains(err.Error(),
		filepath.Join(bad,
			results.ResultsFile)+": lane:") {
		t.Errorf("a lane that is no name: %v, want a refusal naming the file", err)
	}
	empty := t.TempDir()
	if _, _, err := results.ReadAll(t.Context(), []string{empty}); err == nil || !strings.Contains(err.Error(),
		empty+": no results.json in this folder or below") {
		t.Errorf("an empty folder: %v", err)
	}
	if _, _, err := results.ReadAll(t.Context(), nil); err == nil {
		t.Error("no paths: no error")
	}
}

// TestReadAllJudgedNeverPassesARebuiltRun: an output folder whose run ended before its
// results.json, read as cmd reads it (ReadAll, then judge.Finalize), is incomplete and never a
// pass: a failed request fails it, and passing requests alone leave it an error (its error
// says results.json is missing).
func TestReadAllJudgedNeverPassesARebuiltRun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		failed bool
		want   results.Status
	}{{"a request failed", true, results.Fail}, {"every request passed", false, results.Error}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			w, err := results.NewWriter(dir)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 2; i++ {
				rr := results.RequestResult{Case: "c", Index: i, Of: 2, Status: results.Pass, Checks: []results.Check{checks.Passed(results.OutputPresent, "")}}
				if i == 2 && tc.failed {
					rr.Status, rr.Checks = results.Fail, []results.Check{checks.Failed(results.OutputPresent, "no media")}
				}
				if err := w.Request(rr); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, results.ResultsFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
			inputs, _, err := results.ReadAll(t.Context(), []string{dir})
			if err != nil || len(inputs) != 1 {
				t.Fatalf("ReadAll: %v, %d inputs", err, len(inputs))
			}
			res := inputs[0].Result
			judge.Finalize(res)
			if res.Status != tc.want || res.Incomplete == "" {
				t.Errorf("status %s, incomplete %q; want %s and incomplete", res.Status, res.Incomplete, tc.want)
			}
		})
	}
}
