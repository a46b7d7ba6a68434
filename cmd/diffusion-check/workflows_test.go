package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
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

// workflow is what TestExampleWorkflowsTrust reads of a workflow file.
type workflow struct {
	On          map[string]any `yaml:"on"`
	Concurrency struct {
		Group string `yaml:"group"`
	} `yaml:"concurrency"`
	Jobs map[string]struct {
		If          string   `yaml:"if"`
		Needs       any      `yaml:"needs"`
		RunsOn      any      `yaml:"runs-on"`
		Environment string   `yaml:"environment"`
		Steps       []wfStep `yaml:"steps"`
	} `yaml:"jobs"`
}

type wfStep struct {
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
}

// TestExampleWorkflowsTrust checks the example workflows for what docs/security.md promises:
// third-party actions pinned by commit SHA with the tag in a comment; uploads that overwrite
// (so "re-run failed jobs" works); no paths-ignore (a docs-only PR still gets the required
// status); a fork's PR reaches a self-hosted GPU runner only through the fork-gpu environment
// gate; every workflow that publishes sets an error status when there is no report; the
// fork-publish recipe downloads no event file and runs no code of the fork; the label-driven
// lane neither restarts nor cancels on an unrelated label.
func TestExampleWorkflowsTrust(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "workflows")
	files, _ := filepath.Glob(filepath.Join(dir, "*.yml"))
	usesLine := regexp.MustCompile(`^\s*(?:- )?uses: `)
	pinned := regexp.MustCompile(`^\s*(?:- )?uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$`)
	for _, path := range files {
		name := filepath.Base(path)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(raw), "\n") {
			if !usesLine.MatchString(line) || strings.Contains(line, "uses: diffusion-check/diffusion-check@") {
				continue
			}
			if !pinned.MatchString(line) {
				t.Errorf("%s:%d: %q: pin third-party actions by commit SHA, tag in a comment", name, i+1, strings.TrimSpace(line))
			}
		}
		var wf workflow
		if err := yaml.Unmarshal(raw, &wf); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, onPR := wf.On["pull_request"]
		if pr, ok := wf.On["pull_request"].(map[string]any); ok {
			if _, bad := pr["paths-ignore"]; bad {
				t.Errorf("%s: paths-ignore leaves the required status pending on docs-only PRs", name)
			}
		}
		gated := false
		publishes, fallback := false, false
		for jobName, job := range wf.Jobs {
			if job.Environment == "fork-gpu" {
				gated = true
			}
			if onPR && strings.Contains(fmt.Sprint(job.RunsOn), "self-hosted") &&
				(!strings.Contains(fmt.Sprint(job.Needs), "gate") || !strings.Contains(job.If, "needs.gate.result == 'success'")) {
				t.Errorf("%s: job %s runs on a self-hosted runner without the fork gate", name, jobName)
			}
			for _, st := range job.Steps {
				if strings.HasPrefix(st.Uses, "actions/upload-artifact@") && st.With["overwrite"] != "true" {
					t.Errorf("%s: job %s uploads %s without overwrite: true", name, jobName, st.With["name"])
				}
				if strings.HasPrefix(st.Uses, "diffusion-check/diffusion-check@") && st.With["publish"] == "true" {
					publishes = true
					if st.With["event"] != "" {
						t.Errorf("%s: job %s publishes from an uploaded event %q", name, jobName, st.With["event"])
					}
				}
				if st.If == "failure()" && strings.Contains(st.Run, "state=error") {
					fallback = true
				}
				if name == "diffusion-fork-publish.yml" && strings.HasPrefix(st.Uses, "actions/checkout@") {
					t.Errorf("%s: checks out code in the workflow that holds a write token", name)
				}
			}
		}
		if onPR && !gated && strings.Contains(string(raw), "self-hosted") {
			t.Errorf("%s: no job in the fork-gpu environment", name)
		}
		if publishes && !fallback {
			t.Errorf("%s: publishes, but sets no error status when there is no report", name)
		}
		if pr, ok := wf.On["pull_request"].(map[string]any); ok && strings.Contains(fmt.Sprint(pr["types"]), "labeled") &&
			!strings.Contains(wf.Concurrency.Group, "github.event.label.name") {
			t.Errorf("%s: an unrelated label event would cancel the GPU run in progress", name)
		}
	}
}
