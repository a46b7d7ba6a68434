package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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

// repoWorkflows are the repository's own workflows (GitHub-hosted runners only, so no custom
// labels): the release, and the CI of every pull request.
var repoWorkflows = []string{"release.yml", "ci.yml"}

// TestRepositoryWorkflowsLint runs actionlint over the repository's own workflows, which holds
// the inputs they give `uses: ./setup` and `uses: ./` to those actions' files.
func TestRepositoryWorkflowsLint(t *testing.T) {
	var files []string
	for _, f := range repoWorkflows {
		files = append(files, filepath.Join("..", "..", ".github", "workflows", f))
	}
	actionlint(t, files...)
}

// TestActionUsesReleasedImage: action.yml names a released image by its exact version, never
// a Dockerfile (every job would build it) nor a moving tag (docs/releasing.md); at a release
// commit, by its digest.
func TestActionUsesReleasedImage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	image := regexp.MustCompile(`(?m)^  image: (.*)$`).FindSubmatch(b)
	if image == nil {
		t.Fatal("action.yml: no runs.image")
	}
	if !regexp.MustCompile(`^docker://ghcr\.io/diffusion-check/diffusion-check(:v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?|@sha256:[0-9a-f]{64})$`).Match(image[1]) {
		t.Errorf("action.yml: image %q, want docker://ghcr.io/diffusion-check/diffusion-check:vX.Y.Z (or @sha256:… at a release commit)", image[1])
	}
}

// TestCIWorkflow: every pull request and push to main runs the suite with the command .ci/run
// runs, the setup action (`uses: ./setup`) on GitHub's Linux x64 and arm64 and macOS runners
// and in an ubuntu:22.04 container, each against a release the job serves itself, and the
// container action (`uses: ./`) built from the commit, planning the quickstart suite; no job
// holds a write permission.
func TestCIWorkflow(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", "ci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	checkWorkflowTrust(t, "ci.yml", raw)
	var wf struct {
		On          map[string]any `yaml:"on"`
		Permissions map[string]string
		Jobs        map[string]struct {
			RunsOn      any    `yaml:"runs-on"`
			Container   string `yaml:"container"`
			Permissions any    `yaml:"permissions"`
			Strategy    struct {
				Matrix any `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []wfStep `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(raw, &wf); err != nil {
		t.Fatal(err)
	}
	if _, ok := wf.On["pull_request"]; !ok || !strings.Contains(fmt.Sprint(wf.On["push"]), "main") {
		t.Errorf("ci.yml runs on %v, want every pull request and pushes to main", wf.On)
	}
	if fmt.Sprint(wf.Permissions) != "map[contents:read]" {
		t.Errorf("ci.yml: permissions %v, want contents: read alone", wf.Permissions)
	}
	ciRun, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	runs := func(job, what string) bool {
		for _, st := range wf.Jobs[job].Steps {
			if strings.Contains(st.Run, what) || st.Uses == what {
				return true
			}
		}
		return false
	}
	if !strings.Contains(string(ciRun), "./scripts/test") || !runs("test", "./scripts/test") {
		t.Error("ci.yml: the test job does not run ./scripts/test, the command .ci/run runs")
	}
	if got := fmt.Sprint(runsOnLabels("${{ matrix.runner }}", wf.Jobs["setup"].Strategy.Matrix)); got != "[ubuntu-24.04 ubuntu-24.04-arm macos-latest]" {
		t.Errorf("ci.yml: the setup job runs on %v", got)
	}
	if wf.Jobs["setup-container"].Container != "ubuntu:22.04" {
		t.Errorf("ci.yml: setup-container runs in %q, want ubuntu:22.04", wf.Jobs["setup-container"].Container)
	}
	for _, job := range []string{"setup", "setup-container"} {
		if !runs(job, "./scripts/local-release") || !runs(job, "./setup") {
			t.Errorf("ci.yml: job %s does not install a release it serves with uses: ./setup", job)
		}
	}
	plan := false
	for _, st := range wf.Jobs["action"].Steps {
		plan = plan || st.Uses == "./" && st.With["command"] == "plan" && st.With["suite"] == "examples/quickstart/suite.yaml"
	}
	if !plan || !runs("action", "image: Dockerfile") {
		t.Error("ci.yml: the action job does not run `uses: ./` (built from the commit) planning the quickstart suite")
	}
	for name, job := range wf.Jobs {
		if job.Permissions != nil || selfHosted(runsOnLabels(job.RunsOn, job.Strategy.Matrix)) {
			t.Errorf("ci.yml: job %s sets permissions %v or runs on a self-hosted runner (%v): a fork's PR runs it", name, job.Permissions, job.RunsOn)
		}
	}
}

// TestReleaseAttests: the release attests the binaries (their build provenance and SBOM, over
// every archive checksums.txt lists) and the image (pushed to the registry, by the digest the
// build pushed), in jobs that hold id-token and attestations: write; the tagged commit pins the
// image by digest and the binaries by their SHA-256s; the release publishes the SBOM.
func TestReleaseAttests(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Permissions map[string]string `yaml:"permissions"`
			Steps       []wfStep          `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(raw, &wf); err != nil {
		t.Fatal(err)
	}
	attests := func(job string, with map[string]string) bool {
		for _, st := range wf.Jobs[job].Steps {
			if !strings.HasPrefix(st.Uses, "actions/attest@") {
				continue
			}
			match := true
			for k, v := range with {
				match = match && (v == "*" && st.With[k] != "" || st.With[k] == v)
			}
			if match {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		job  string
		with map[string]string
	}{
		{"binaries", map[string]string{"subject-checksums": "dist/checksums.txt"}},
		{"binaries", map[string]string{"subject-checksums": "dist/checksums.txt", "sbom-path": "dist/diffusion-check.spdx.json"}},
		{"image", map[string]string{"subject-digest": "${{ steps.build.outputs.digest }}", "push-to-registry": "true"}},
		{"image", map[string]string{"subject-digest": "${{ steps.build.outputs.digest }}", "push-to-registry": "true", "sbom-path": "*"}},
	} {
		if !attests(tc.job, tc.with) {
			t.Errorf("release.yml: job %s has no actions/attest step with %v", tc.job, tc.with)
		}
		if p := wf.Jobs[tc.job].Permissions; p["id-token"] != "write" || p["attestations"] != "write" {
			t.Errorf("release.yml: job %s attests without id-token and attestations: write (%v)", tc.job, p)
		}
	}
	var pins, publishes bool
	for _, st := range wf.Jobs["tag"].Steps {
		pins = pins || strings.Contains(st.Run, "cp dist/checksums.txt setup/checksums.txt") && strings.Contains(st.Run, "image: $IMAGE") &&
			strings.Contains(st.Run, `git tag "$VERSION"`)
	}
	for _, st := range wf.Jobs["publish"].Steps {
		publishes = publishes || strings.Contains(st.Run, "gh release create") && strings.Contains(st.Run, "dist/diffusion-check.spdx.json")
	}
	if !pins || !publishes {
		t.Errorf("release.yml: the tagged commit pins image and binaries: %t; the release publishes the SBOM: %t", pins, publishes)
	}
}

// workflow is what TestExampleWorkflowsTrust reads of a workflow file.
type workflow struct {
	On          map[string]any `yaml:"on"`
	Concurrency struct {
		Group string `yaml:"group"`
	} `yaml:"concurrency"`
	Jobs map[string]struct {
		If          string `yaml:"if"`
		Needs       any    `yaml:"needs"`
		RunsOn      any    `yaml:"runs-on"`
		Environment string `yaml:"environment"`
		Permissions any    `yaml:"permissions"`
		Strategy    struct {
			Matrix any `yaml:"matrix"` // a mapping, or an expression (fromJSON of a plan)
		} `yaml:"strategy"`
		Steps []wfStep `yaml:"steps"`
	} `yaml:"jobs"`
}

// runsOnLabels is a job's runs-on with `${{ matrix.K }}` replaced by the list of the matrix's
// values of K, as GitHub expands it; any other expression is left as it is.
func runsOnLabels(runsOn, matrix any) any {
	s, ok := runsOn.(string)
	mm, isMap := matrix.(map[string]any)
	if !ok || !isMap {
		return runsOn
	}
	m := regexp.MustCompile(`^\$\{\{\s*matrix\.(\w+)\s*\}\}$`).FindStringSubmatch(s)
	if m == nil {
		return runsOn
	}
	if vals, ok := mm[m[1]].([]any); ok {
		return vals
	}
	return runsOn
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
// gate, whose first step is check-gate (actions: read); every workflow that publishes sets an error status when there is no report; the
// fork-publish recipe downloads no event file and runs no code of the fork; the label-driven
// lane neither restarts nor cancels on an unrelated label.
func TestExampleWorkflowsTrust(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "workflows")
	files, _ := filepath.Glob(filepath.Join(dir, "*.yml"))
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		checkWorkflowTrust(t, filepath.Base(path), raw)
	}
}

// TestReadmeWorkflowTrust: the README's workflow, the first one a newcomer copies, follows the
// same rules as the examples and passes actionlint.
func TestReadmeWorkflowTrust(t *testing.T) {
	raw := readmeWorkflow(t)
	checkWorkflowTrust(t, "README.md (workflow block)", raw)
	path := filepath.Join(t.TempDir(), "readme.yml")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	actionlint(t, "-config-file", filepath.Join("..", "..", "examples", "workflows", "actionlint.yaml"), path)
}

// readmeWorkflow is the YAML block of the README's "In a GitHub workflow" section.
func readmeWorkflow(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "### In a GitHub workflow")
	if !ok {
		t.Fatal("README.md: no \"In a GitHub workflow\" section")
	}
	_, block, ok := strings.Cut(section, "```yaml\n")
	if !ok {
		t.Fatal("README.md: the workflow section has no yaml block")
	}
	block, _, ok = strings.Cut(block, "```")
	if !ok {
		t.Fatal("README.md: the workflow's yaml block is not closed")
	}
	return []byte(block)
}

// checkWorkflowTrust holds one workflow file to the rules of TestExampleWorkflowsTrust.
func checkWorkflowTrust(t *testing.T, name string, raw []byte) {
	t.Helper()
	usesLine := regexp.MustCompile(`^\s*(?:- )?uses: [^.]`) // local actions (./, ./setup) are this commit's
	pinned := regexp.MustCompile(`^\s*(?:- )?uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$`)
	for i, line := range strings.Split(string(raw), "\n") {
		if !usesLine.MatchString(line) || strings.Contains(line, "uses: diffusion-check/diffusion-check@") ||
			strings.Contains(line, "uses: diffusion-check/diffusion-check/setup@") {
			continue
		}
		if !pinned.MatchString(line) {
			t.Errorf("%s:%d: %q: pin third-party actions by commit SHA, tag in a comment", name, i+1, strings.TrimSpace(line))
		}
	}
	var wf workflow
	if err := yaml.Unmarshal(raw, &wf); err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	_, onPR := wf.On["pull_request"]
	if pr, ok := wf.On["pull_request"].(map[string]any); ok {
		if _, bad := pr["paths-ignore"]; bad {
			t.Errorf("%s: paths-ignore leaves the required status pending on docs-only PRs", name)
		}
	}
	gated, onSelfHosted := false, false
	publishes, fallback := false, false
	for jobName, job := range wf.Jobs {
		if job.Environment == "fork-gpu" {
			gated = true
			// GitHub creates a missing environment without reviewers: the gate job's first
			// step must fail closed then, with the permission it needs to read it.
			if len(job.Steps) == 0 || !strings.HasPrefix(job.Steps[0].Uses, "diffusion-check/diffusion-check@") ||
				job.Steps[0].With["command"] != "check-gate" || job.Steps[0].With["environment"] != job.Environment {
				t.Errorf("%s: job %s: its first step is not check-gate of environment %s", name, jobName, job.Environment)
			}
			if !strings.Contains(fmt.Sprint(job.Permissions), "actions:read") {
				t.Errorf("%s: job %s: check-gate needs permissions: actions: read, got %v", name, jobName, job.Permissions)
			}
		}
		runsOn := runsOnLabels(job.RunsOn, job.Strategy.Matrix)
		if selfHosted(runsOn) {
			onSelfHosted = true
		}
		if onPR && selfHosted(runsOn) &&
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
	if onPR && !gated && onSelfHosted {
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

// selfHosted reports whether runs-on picks a self-hosted runner: any label but those of
// GitHub's own runners (ubuntu-*, windows-*, macos-*). SGLang's GPU pools are named by labels
// alone (1-gpu-h100, 8-gpu-h200), without "self-hosted"; an expression counts as self-hosted.
func selfHosted(runsOn any) bool {
	var labels []string
	switch v := runsOn.(type) {
	case string:
		labels = []string{v}
	case []any:
		for _, l := range v {
			labels = append(labels, fmt.Sprint(l))
		}
	default:
		return runsOn != nil
	}
	for _, l := range labels {
		if !strings.HasPrefix(l, "ubuntu-") && !strings.HasPrefix(l, "windows-") && !strings.HasPrefix(l, "macos-") {
			return true
		}
	}
	return false
}

// TestSelfHosted: the labels that make a job self-hosted.
func TestSelfHosted(t *testing.T) {
	for _, tc := range []struct {
		runsOn any
		want   bool
	}{
		{"ubuntu-latest", false}, {"ubuntu-24.04", false}, {[]any{"macos-15"}, false},
		{"1-gpu-h100", true}, {"${{ inputs.runner }}", true}, {[]any{"self-hosted", "linux", "gpu"}, true},
		{[]any{"ubuntu-latest", "gpu"}, true},
	} {
		if got := selfHosted(tc.runsOn); got != tc.want {
			t.Errorf("selfHosted(%v) = %v, want %v", tc.runsOn, got, tc.want)
		}
	}
}

// TestExampleGPUJobsShape: every GPU job of the examples and the README's workflow has the shape
// of SGLang's own diffusion jobs (docs/github-actions.md#the-gpu-job-on-a-bare-host): on a
// self-hosted host, checkout, the project's install step (id: install), the setup action, then
// `diffusion-check run` on the host; HF_TOKEN from a secret and HF_HOME set for the job.
func TestExampleGPUJobsShape(t *testing.T) {
	sources := map[string][]byte{"README.md (workflow block)": readmeWorkflow(t)}
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "workflows", "*.yml"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources[filepath.Base(f)] = raw
	}
	jobs := 0
	for name, raw := range sources {
		var wf struct {
			Jobs map[string]struct {
				RunsOn any               `yaml:"runs-on"`
				Env    map[string]string `yaml:"env"`
				Steps  []struct {
					ID   string `yaml:"id"`
					Uses string `yaml:"uses"`
					Run  string `yaml:"run"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(raw, &wf); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for jobName, job := range wf.Jobs {
			if !selfHosted(job.RunsOn) {
				continue
			}
			jobs++
			var order []string
			for _, st := range job.Steps {
				switch {
				case strings.HasPrefix(st.Uses, "actions/checkout@"):
					order = append(order, "checkout")
				case st.ID == "install":
					order = append(order, "install")
				case strings.HasPrefix(st.Uses, "diffusion-check/diffusion-check/setup@"):
					order = append(order, "setup")
				case strings.HasPrefix(st.Uses, "diffusion-check/diffusion-check@"):
					t.Errorf("%s: job %s runs the container action on the GPU host: it cannot start a server installed on the host", name, jobName)
				case strings.HasPrefix(strings.TrimSpace(st.Run), "diffusion-check run "):
					order = append(order, "run")
				}
			}
			if got := strings.Join(order, " → "); got != "checkout → install → setup → run" {
				t.Errorf("%s: job %s: steps %s, want checkout → install → setup → run", name, jobName, got)
			}
			if job.Env["HF_TOKEN"] != "${{ secrets.HF_TOKEN }}" || job.Env["HF_HOME"] == "" {
				t.Errorf("%s: job %s: env HF_TOKEN %q (want ${{ secrets.HF_TOKEN }}) and HF_HOME %q (want the host's cache)", name, jobName, job.Env["HF_TOKEN"],
					job.Env["HF_HOME"])
			}
		}
	}
	if jobs < 4 {
		t.Errorf("%d GPU jobs checked, want the README's and every example's (4)", jobs)
	}
}

// node24Majors is, for each action the workflows use, its first major whose action.yml runs on
// Node.js 24 (`runs.using: node24` at that tag; GitHub is retiring node20). Read from each
// action's repository: checkout v5, upload-artifact v6, download-artifact v7, setup-go v7, and
// docker's login/setup-qemu/setup-buildx v4 and build-push v7.
var node24Majors = map[string]int{
	"actions/checkout":           5,
	"actions/upload-artifact":    6,
	"actions/download-artifact":  7,
	"actions/setup-go":           7,
	"docker/login-action":        4,
	"docker/setup-qemu-action":   4,
	"docker/setup-buildx-action": 4,
	"docker/build-push-action":   7,
	"actions/attest":             3,
	// anchore/sbom-action is still at v0: v0.24.0 is its first release on Node.js 24 (read).
	"anchore/sbom-action": 0,
}

// TestWorkflowActionsCurrent: every third-party action of the example workflows, the README's
// workflow and the repository's own workflows is pinned by commit SHA at a major that runs on Node.js 24.
func TestWorkflowActionsCurrent(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "workflows", "*.yml"))
	for _, f := range repoWorkflows {
		files = append(files, filepath.Join("..", "..", ".github", "workflows", f))
	}
	sources := map[string][]byte{"README.md (workflow block)": readmeWorkflow(t)}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources[filepath.Base(f)] = raw
	}
	use := regexp.MustCompile(`^\s*(?:- )?uses: ([\w.-]+/[\w.-]+)@(\S+)(?: # v(\d+)\.\d+\.\d+)?\s*$`)
	for name, raw := range sources {
		for i, line := range strings.Split(string(raw), "\n") {
			m := use.FindStringSubmatch(line)
			if m == nil || m[1] == "diffusion-check/diffusion-check" {
				continue
			}
			first, known := node24Majors[m[1]]
			if !known {
				t.Errorf("%s:%d: %s: not in node24Majors; add its first Node.js 24 major", name, i+1, m[1])
				continue
			}
			if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(m[2]) || m[3] == "" {
				t.Errorf("%s:%d: %s@%s: pin by commit SHA with the tag in a comment", name, i+1, m[1], m[2])
				continue
			}
			if major, _ := strconv.Atoi(m[3]); major < first {
				t.Errorf("%s:%d: %s v%d runs on Node.js 20 or older; use v%d or newer", name, i+1, m[1], major, first)
			}
		}
	}
}

// TestReleaseShipsLicense: the release archives and the image carry LICENSE, goreleaser takes
// the repository from the origin remote (a fork releases to itself), and the Dockerfile declares
// its version stamps after the module download, so a new version does not re-download modules.
func TestReleaseShipsLicense(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if !strings.Contains(read("LICENSE"), "Apache License") {
		t.Error("LICENSE: not the Apache License 2.0")
	}
	var gr struct {
		Archives []struct {
			Files []string `yaml:"files"`
		} `yaml:"archives"`
		Release map[string]any `yaml:"release"`
	}
	if err := yaml.Unmarshal([]byte(read(".goreleaser.yaml")), &gr); err != nil {
		t.Fatal(err)
	}
	for i, a := range gr.Archives {
		if !slices.Contains(a.Files, "LICENSE") {
			t.Errorf(".goreleaser.yaml: archives[%d] does not ship LICENSE", i)
		}
	}
	if _, fixed := gr.Release["github"]; fixed {
		t.Error(".goreleaser.yaml: release.github hard-codes the repository; a fork's release would target it")
	}
	df := read("Dockerfile")
	if !strings.Contains(df, "COPY LICENSE ") || !strings.Contains(df, "org.opencontainers.image.licenses") {
		t.Error("Dockerfile: the image does not carry LICENSE and its license label")
	}
	download, stamp := strings.Index(df, "go mod download"), strings.Index(df, "ARG VERSION")
	if download < 0 || stamp < download {
		t.Error("Dockerfile: ARG VERSION comes before `go mod download`, so every version re-downloads the modules")
	}
}

// TestActionMetadata: action.yml is publishable on the Marketplace, whose release form
// refuses "Description must be less than 125 characters" (met by
// oliver-zehentleitner/keep-the-why#221 and Booyaka101/hass-breakage-radar#44, among many),
// and takes branding only with one of GitHub's colours and a Feather icon that GitHub does
// not exclude (https://docs.github.com/actions/reference/workflows-and-actions/metadata-syntax#branding).
func TestActionMetadata(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
		Branding    struct {
			Icon  string `yaml:"icon"`
			Color string `yaml:"color"`
		} `yaml:"branding"`
	}
	if err := yaml.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(meta.Description)); n == 0 || n >= 125 {
		t.Errorf("action.yml: description of %d characters, want 1 to 124: %q", n, meta.Description)
	}
	if meta.Name == "" {
		t.Error("action.yml: no name")
	}
	colors := []string{"white", "black", "yellow", "blue", "green", "orange", "red", "purple", "gray-dark"}
	if !slices.Contains(colors, meta.Branding.Color) {
		t.Errorf("action.yml: branding color %q, want one of %v", meta.Branding.Color, colors)
	}
	// The Feather icons GitHub's branding does not take.
	excluded := []string{"coffee", "columns", "divide-circle", "divide-square", "divide", "frown", "hexagon", "key", "meh", "mouse-pointer", "smile", "tool",
		"x-octagon"}
	if meta.Branding.Icon == "" || slices.Contains(excluded, meta.Branding.Icon) {
		t.Errorf("action.yml: branding icon %q: want a Feather icon GitHub takes", meta.Branding.Icon)
	}
}
