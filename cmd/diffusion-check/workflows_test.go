package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestExampleWorkflowsLint runs actionlint (pinned as a tool in go.mod) over the example
// workflows, with the custom labels of the self-hosted GPU runners they use.
func TestExampleWorkflowsLint(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "workflows")
	files, err := filepath.Glob(filepath.Join(dir, "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflows in %s: %v", dir, err)
	}
	args := append([]string{"tool", "actionlint", "-config-file", filepath.Join(dir, "actionlint.yaml")}, files...)
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("actionlint: %v\n%s", err, out)
	}
}
