package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// actionlint runs actionlint (pinned as a tool in go.mod) with args.
func actionlint(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("go", append([]string{"tool", "actionlint"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("actionlint: %v\n%s", err, out)
	}
}

// TestExampleWorkflowsLint runs actionlint over the example workflows, with the custom labels
// of the self-hosted GPU runners they use.
func TestExampleWorkflowsLint(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "workflows")
	files, err := filepath.Glob(filepath.Join(dir, "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflows in %s: %v", dir, err)
	}
	actionlint(t, append([]string{"-config-file", filepath.Join(dir, "actionlint.yaml")}, files...)...)
}

// TestReleaseWorkflowLint runs actionlint over the release workflow (GitHub-hosted runners
// only, so no custom labels).
func TestReleaseWorkflowLint(t *testing.T) {
	actionlint(t, filepath.Join("..", "..", ".github", "workflows", "release.yml"))
}

// TestActionUsesReleasedImage: action.yml names a released image by its exact version, never
// a Dockerfile (every job would build it) nor a moving tag (docs/releasing.md).
func TestActionUsesReleasedImage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	image := regexp.MustCompile(`(?m)^  image: (.*)$`).FindSubmatch(b)
	if image == nil {
		t.Fatal("action.yml: no runs.image")
	}
	if !regexp.MustCompile(`^docker://ghcr\.io/diffusion-check/diffusion-check:v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).Match(image[1]) {
		t.Errorf("action.yml: image %q, want docker://ghcr.io/diffusion-check/diffusion-check:vX.Y.Z", image[1])
	}
}
