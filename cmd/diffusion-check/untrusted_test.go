package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestUntrustedLinesRunNoWorkflowCommand: in Actions, the lines report prints from a results
// file (check details in the case groups, the table, an error quoting the file) come between
// ::stop-commands::TOKEN and ::TOKEN:: with a fresh random token, so a detail such as
// "  ::add-mask::x" is printed, not run; diffusion-check's own commands stay outside.
func TestUntrustedLinesRunNoWorkflowCommand(t *testing.T) {
	dir := t.TempDir()
	res := `{"schema": "diffusion-check/results/v1", "suite": "ci", "lane": "base",
 "partition": {"index": 0, "total": 1}, "status": "fail",
 "started_at": "2025-03-01T12:00:00Z", "finished_at": "2025-03-01T12:01:00Z",
 "cases": [{"id": "t2i", "server": "ref", "modality": "image", "status": "fail", "wall_ms": 3000,
   "requests": [{"index": 1, "of": 1, "status": "fail", "started_at": "2025-03-01T12:00:00Z", "e2e_ms": 2100,
     "checks": [{"name": "::add-mask::hunter2", "status": "fail", "detail": "x"},
                {"name": "::error::forged", "status": "fail", "detail": "::warning::forged"}]}]}]}`
	if err := os.WriteFile(filepath.Join(dir, "results.json"), []byte(res), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	vars := map[string]string{"GITHUB_ACTIONS": "true"}
	code := run(t.Context(), []string{"report", filepath.Join(dir, "results.json")}, func(k string) string { return vars[k] }, &stdout, &stderr)
	if code != exitFailed {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr.String())
	}
	// Replay the log as the runner reads it: a line (leading space trimmed) that starts with
	// "::" is a command unless commands are stopped.
	var obeyed []string
	stopped := ""
	tokens := map[string]bool{}
	for _, line := range strings.Split(stdout.String(), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case stopped != "" && line == "::"+stopped+"::":
			stopped = ""
		case stopped != "":
		case strings.HasPrefix(line, "::stop-commands::"):
			stopped = strings.TrimPrefix(line, "::stop-commands::")
			if tokens[stopped] || len(stopped) < 16 {
				t.Errorf("token %q reused or short", stopped)
			}
			tokens[stopped] = true
		case strings.HasPrefix(line, "::"):
			obeyed = append(obeyed, line)
		}
	}
	cmdRE := regexp.MustCompile(`^::(group|endgroup|error|warning|notice)\b`)
	for _, c := range obeyed {
		if strings.HasPrefix(c, "::add-mask::") || strings.HasPrefix(c, "::error::forged") || strings.HasPrefix(c, "::warning::forged") || !cmdRE.MatchString(c) {
			t.Errorf("the runner would obey %q", c)
		}
	}
	if len(obeyed) == 0 || !strings.Contains(stdout.String(), "::add-mask::hunter2") {
		t.Errorf("want the groups obeyed and the detail printed; log:\n%s", stdout.String())
	}
}
