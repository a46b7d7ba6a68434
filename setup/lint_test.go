package setup

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// action is what the lint reads of action.yml.
type action struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]any `yaml:"outputs"`
	Runs    struct {
		Using string           `yaml:"using"`
		Steps []map[string]any `yaml:"steps"`
	} `yaml:"runs"`
}

// actionlint runs actionlint (a tool of go.mod) on files; it finds each file's project (the
// folder that holds .git) from the file's own path.
func actionlint(t *testing.T, files ...string) {
	t.Helper()
	if out, err := exec.Command("go", append([]string{"tool", "actionlint"}, files...)...).CombinedOutput(); err != nil {
		t.Fatalf("actionlint: %v\n%s", err, out)
	}
}

// TestActionLint lints the setup action with actionlint, twice: as a local action used by a
// workflow (actionlint then reads action.yml and checks the inputs given and the outputs read
// against it), and its composite steps as the steps of a reusable workflow with the same inputs,
// so that their expressions and shell are checked as a workflow's are (actionlint reads
// workflows, not the steps of an action's own file).
func TestActionLint(t *testing.T) {
	raw, err := os.ReadFile("action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using = %q, want composite (no Docker: the binary runs on the host)", a.Runs.Using)
	}
	names, outputs := slices.Sorted(maps.Keys(a.Inputs)), slices.Sorted(maps.Keys(a.Outputs))

	// A project of its own (actionlint finds local actions from the repository root, .git).
	root := t.TempDir()
	for _, d := range []string{".git", "setup", filepath.Join(".github", "workflows")} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "setup", "action.yml"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var use strings.Builder
	use.WriteString("on: push\npermissions: {contents: read}\njobs:\n  gpu:\n    runs-on: ubuntu-latest\n    steps:\n      - id: setup\n        uses: " +
		"./setup\n        with:\n")
	for _, n := range names {
		fmt.Fprintf(&use, "          %s: %q\n", n, a.Inputs[n].Default)
	}
	use.WriteString("      - run: env | grep -c '^OUT_'\n        env:\n")
	for _, n := range outputs {
		fmt.Fprintf(&use, "          OUT_%s: ${{ steps.setup.outputs.%s }}\n", strings.ToUpper(n), n)
	}

	steps, err := yaml.Marshal(a.Runs.Steps)
	if err != nil {
		t.Fatal(err)
	}
	var call strings.Builder
	call.WriteString("on:\n  workflow_call:\n    inputs:\n")
	for _, n := range names {
		fmt.Fprintf(&call, "      %s: {type: string, required: false, default: %q}\n", n, a.Inputs[n].Default)
	}
	call.WriteString("permissions: {contents: read}\njobs:\n  setup:\n    runs-on: ubuntu-latest\n    steps:\n")
	for line := range strings.SplitSeq(strings.TrimRight(string(steps), "\n"), "\n") {
		call.WriteString("      " + line + "\n")
	}
	for file, text := range map[string]string{"use-setup.yml": use.String(), "setup-steps.yml": call.String()} {
		if err := os.WriteFile(filepath.Join(root, ".github", "workflows", file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	actionlint(t, filepath.Join(root, ".github", "workflows", "use-setup.yml"), filepath.Join(root, ".github", "workflows", "setup-steps.yml"))
}

// TestVersionIsTheImages: the release the setup action installs by default is the one whose
// image action.yml names, so that `@vX.Y.Z` of either action is the same release; the release
// workflow checks both against the version it publishes (docs/releasing.md). At a release
// commit, where action.yml names the image by digest, setup/checksums.txt pins that release's
// archives.
func TestVersionIsTheImages(t *testing.T) {
	var a action
	raw, err := os.ReadFile("action.yml")
	if err == nil {
		err = yaml.Unmarshal(raw, &a)
	}
	if err != nil {
		t.Fatal(err)
	}
	top, err := os.ReadFile(filepath.Join("..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	v := a.Inputs["version"].Default
	if strings.Contains(string(top), "  image: docker://ghcr.io/diffusion-check/diffusion-check@sha256:") {
		// A release commit (release.yml's tag job): the image by digest, the binaries by the
		// SHA-256s of the default version's archives, beside install.sh.
		sums, err := os.ReadFile("checksums.txt")
		if err != nil || !strings.Contains(string(sums), "  diffusion-check_"+strings.TrimPrefix(v, "v")+"_linux_amd64.tar.gz") {
			t.Errorf("a release commit pins the image by digest, but setup/checksums.txt does not pin %s's archives (%v)", v, err)
		}
	} else {
		_, image, _ := strings.Cut(string(top), "  image: docker://ghcr.io/diffusion-check/diffusion-check:")
		image, _, _ = strings.Cut(image, "\n")
		if v == "" || v != image {
			t.Errorf("setup/action.yml installs %q by default, action.yml's image is %q: one release for both", v, image)
		}
	}
	pinned, err := exec.Command("awk", `/^  version:/ { v = 1 } v && /^    default:/ { print $2; exit }`, "action.yml").Output()
	if err != nil || strings.TrimSpace(string(pinned)) != a.Inputs["version"].Default {
		t.Errorf("the release workflow's awk reads %q (%v), want %q", pinned, err, a.Inputs["version"].Default)
	}
}
