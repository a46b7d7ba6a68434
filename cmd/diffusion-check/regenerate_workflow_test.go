package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The regenerate workflow as far as this test reads it.
type ghWorkflow struct {
	Jobs map[string]struct {
		Strategy struct {
			Matrix string `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []ghStep `yaml:"steps"`
	} `yaml:"jobs"`
}

type ghStep struct {
	ID   string            `yaml:"id"`
	If   string            `yaml:"if"`
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
	Run  string            `yaml:"run"`
}

// workflowRun plays the jobs of a workflow on this machine, as GitHub would run them: a
// fresh clone of the repository per job, the action's steps as `diffusion-check action`
// with INPUT_* variables, artifacts as folders, `run:` steps in bash, and a fake `gh`.
type workflowRun struct {
	t         *testing.T
	origin    string // bare repository: what checkout clones and push pushes to
	artifacts string
	bin       string // PATH entry holding diffusion-check and the fake gh
	ghLog     string
	inputs    map[string]string
	secrets   map[string]string
	needs     map[string]string // plan job outputs
	// mayFail lets a run: step fail: failed is then its output, and play stops.
	mayFail bool
	failed  string
	// checkoutTokens are the token inputs of each job's checkouts (what its git push uses).
	checkoutTokens map[string][]string
}

var exprRE = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// eval evaluates the few expressions the workflow uses; any other fails the test, so that
// the test cannot skip what it does not understand.
func (w *workflowRun) eval(expr string, ctx map[string]string) string {
	w.t.Helper()
	switch {
	case strings.HasPrefix(expr, "inputs."):
		return w.inputs[strings.TrimPrefix(expr, "inputs.")]
	case expr == "github.token":
		return "ghs_fake"
	case strings.HasPrefix(expr, "secrets."):
		return w.secrets[strings.TrimPrefix(expr, "secrets.")] // "" when not set, as GitHub does
	case expr == "fromJSON(needs.plan.outputs.matrix)":
		return w.needs["matrix"]
	case strings.HasPrefix(expr, "secrets."):
		return "" // none here, as in a fork's run
	}
	if v, ok := ctx[expr]; ok {
		return v
	}
	w.t.Fatalf("workflow expression %q: not understood by this test", expr)
	return ""
}

func (w *workflowRun) expand(s string, ctx map[string]string) string {
	return exprRE.ReplaceAllStringFunc(s, func(m string) string { return w.eval(exprRE.FindStringSubmatch(m)[1], ctx) })
}

// condition evaluates a step's if: always(), or inputs.X == 'Y'.
func (w *workflowRun) condition(s string) bool {
	w.t.Helper()
	s = strings.TrimSpace(s)
	if s == "" || s == "always()" {
		return true
	}
	if m := regexp.MustCompile(`^inputs\.(\w+) == '([^']*)'$`).FindStringSubmatch(s); m != nil {
		return w.inputs[m[1]] == m[2]
	}
	w.t.Fatalf("step condition %q: not understood by this test", s)
	return false
}

// job runs one job's steps in a fresh clone and returns the outputs of its steps by id.
func (w *workflowRun) job(name string, steps []ghStep, ctx map[string]string) map[string]map[string]string {
	t := w.t
	ws := filepath.Join(t.TempDir(), "workspace")
	git(t, "", "clone", "-q", w.origin, ws)
	outputs := map[string]map[string]string{}
	for i, st := range steps {
		if !w.condition(st.If) {
			continue
		}
		what := fmt.Sprintf("job %s step %d (%s%s)", name, i+1, st.Uses, st.Name)
		with := map[string]string{}
		for k, v := range st.With {
			with[k] = w.expand(v, ctx)
		}
		switch {
		case strings.HasPrefix(st.Uses, "actions/checkout@"):
			// The clone above; the token is the one its later git push would use.
			if w.checkoutTokens == nil {
				w.checkoutTokens = map[string][]string{}
			}
			w.checkoutTokens[name] = append(w.checkoutTokens[name], with["token"])
		case strings.HasPrefix(st.Uses, "diffusion-check/diffusion-check@"):
			outputs[st.ID] = w.action(what, ws, with)
		case strings.HasPrefix(st.Uses, "diffusion-check/diffusion-check/setup@"):
			// The binary is on PATH already (setup/setup_test.go tests the action itself).
		case st.ID == "install":
			// The project's own install step: the reference server of this suite needs none.
		case strings.HasPrefix(st.Uses, "actions/upload-artifact@"):
			src := filepath.Join(ws, with["path"])
			if _, err := os.Stat(src); err == nil {
				copyTree(t, src, filepath.Join(w.artifacts, with["name"]))
			}
		case strings.HasPrefix(st.Uses, "actions/download-artifact@"):
			names, _ := filepath.Glob(filepath.Join(w.artifacts, with["pattern"]))
			for _, a := range names {
				dst := filepath.Join(ws, with["path"], filepath.Base(a))
				if with["merge-multiple"] == "true" {
					dst = filepath.Join(ws, with["path"])
				}
				copyTree(t, a, dst)
			}
		case st.Run != "":
			cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", st.Run)
			cmd.Dir = ws
			cmd.Env = w.env()
			for k, v := range st.Env {
				cmd.Env = append(cmd.Env, k+"="+w.expand(v, ctx))
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				if w.mayFail {
					w.failed = fmt.Sprintf("%s: %v\n%s", what, err, out)
					return outputs
				}
				t.Fatalf("%s: %v\n%s", what, err, out)
			}
		default:
			t.Fatalf("%s: uses %q: not understood by this test", what, st.Uses)
		}
	}
	return outputs
}

func (w *workflowRun) env() []string {
	return append(os.Environ(),
		"PATH="+w.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GITHUB_ACTIONS=true", "GITHUB_RUN_ID=4242", "GITHUB_SERVER_URL=https://github.com",
		"GITHUB_REPOSITORY=octo/diffusion", "GH_LOG="+w.ghLog,
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
}

// action runs the container action's entrypoint with the step's inputs and returns the
// outputs it set.
func (w *workflowRun) action(what, ws string, with map[string]string) map[string]string {
	t := w.t
	outFile := filepath.Join(t.TempDir(), "github_output")
	cmd := exec.Command(filepath.Join(w.bin, "diffusion-check"), "action")
	cmd.Dir = ws
	cmd.Env = append(w.env(), "GITHUB_OUTPUT="+outFile, "GITHUB_WORKSPACE="+ws)
	for k, v := range with {
		cmd.Env = append(cmd.Env, "INPUT_"+strings.ToUpper(k)+"="+v)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: diffusion-check action: %v\n%s", what, err, out)
	}
	return readOutputs(t, outFile)
}

// readOutputs parses a $GITHUB_OUTPUT file (name<<DELIMITER ... DELIMITER entries).
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	outs := map[string]string{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return outs
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, delim, ok := strings.Cut(sc.Text(), "<<")
		if !ok {
			t.Fatalf("%s: line %q is not name<<delimiter", path, sc.Text())
		}
		var value []string
		for sc.Scan() && sc.Text() != delim {
			value = append(value, sc.Text())
		}
		outs[name] = strings.Join(value, "\n")
	}
	return outs
}

// play runs plan, every partition of run, and propose, in that order; with mayFail it stops
// at the first failed step.
func (w *workflowRun) play(wf ghWorkflow) {
	t := w.t
	for _, j := range []string{"plan", "run", "propose"} {
		if _, ok := wf.Jobs[j]; !ok {
			t.Fatalf("the workflow has no job %q", j)
		}
	}
	w.needs = w.job("plan", wf.Jobs["plan"].Steps, nil)["plan"]
	if w.failed != "" {
		return
	}
	var matrix struct {
		Include []map[string]string `json:"include"`
	}
	if err := json.Unmarshal([]byte(w.expand(wf.Jobs["run"].Strategy.Matrix, nil)), &matrix); err != nil || len(matrix.Include) == 0 {
		t.Fatalf("plan's matrix output %q: %v", w.needs["matrix"], err)
	}
	for i, m := range matrix.Include {
		if w.job("run", wf.Jobs["run"].Steps, map[string]string{"matrix.partition": m["partition"], "strategy.job-index": fmt.Sprint(i)}); w.failed != "" {
			return
		}
	}
	w.job("propose", wf.Jobs["propose"].Steps, nil)
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("mkdir", "-p", dst).CombinedOutput(); err != nil {
		t.Fatalf("mkdir %s: %v %s", dst, err, out)
	}
	if out, err := exec.Command("cp", "-R", src+"/.", dst).CombinedOutput(); err != nil {
		t.Fatalf("copy %s to %s: %v %s", src, dst, err, out)
	}
}

// TestRegenerateWorkflow plays examples/workflows/diffusion-regenerate.yml against the
// reference server, once per mode: the pull request must carry the new files and the
// old → new table. Two cases of 20 estimated minutes make the plan's 30-minute target split
// them into two partitions, so merging partitions is exercised too.
func TestRegenerateWorkflow(t *testing.T) {
	t.Parallel() // self-contained: its servers and ffmpeg run beside the others' (TestMain)
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "workflows", "diffusion-regenerate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf ghWorkflow
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	seed := filepath.Join(root, "seed")
	suiteDir := filepath.Join(seed, "ci", "diffusion")
	for _, d := range []string{"ground_truth", "perf_baselines"} {
		if err := os.MkdirAll(filepath.Join(suiteDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(suiteDir, d, ".keep"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The ground truth is what the gt mode writes: until then a case without it is skipped,
	// not failed (checks.ground_truth_required: false).
	suiteYAML := `gpu: h100
baselines: perf_baselines
ground_truth: ground_truth
servers:
  ref: {builtin: {step_ms: 1, load_ms: 10}}
cases:
  - {id: fox, server: ref, lane: base, modality: image, repeat: 3, estimate: 20m, ` +
		`request: {prompt: a fox, size: 64x64, seed: 1, steps: 2}, checks: {ground_truth_required: false}}
  - {id: waves, server: ref, lane: base, modality: video, repeat: 2, estimate: 20m, ` +
		`request: {prompt: waves, size: 64x48, seed: 2, steps: 2, num_frames: 4, fps: 4}, checks: {ground_truth_required: false}}
`
	if err := os.WriteFile(filepath.Join(suiteDir, "suite.yaml"), []byte(suiteYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, seed, "init", "-q", "-b", "main")
	git(t, seed, "add", ".")
	git(t, seed, "commit", "-qm", "seed")
	origin := filepath.Join(root, "origin.git")
	git(t, "", "clone", "-q", "--bare", seed, origin)

	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(binDir, "diffusion-check"), filepath.Join(bin, "diffusion-check")); err != nil {
		t.Fatal(err)
	}
	// The fake gh records its arguments, its token and the body file it was given.
	gh := "#!/bin/bash\nprintf '%s\\n' \"$*\" >> \"$GH_LOG\"\nprintf '%s' \"$GH_TOKEN\" > \"$GH_LOG.token\"\n" +
		"while [ $# -gt 0 ]; do if [ \"$1\" = --body-file ]; then cp \"$2\" \"$GH_LOG.body\"; fi; shift; done\n"
	if err := os.WriteFile(filepath.Join(bin, "gh"), []byte(gh), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		mode  string
		files []string // in the pull request's branch
		body  []string // regexps the pull request's body must match
	}{
		{"baseline", []string{"ci/diffusion/perf_baselines/h100.json", "ci/diffusion/perf_baselines/h100.spread.json"}, []string{
			`(?m)^SCENARIO +METRIC +OLD +NEW +CHANGE$`,
			`(?m)^fox +expected_e2e_ms +- +[0-9.]+ +new$`,
			`(?m)^waves +stages_ms\.\w+ +- +[0-9.]+ +new$`,
			`(?m)^  fox: 3 requests × 1 partition$`,
			`(?m)^  waves: 2 requests × 1 partition$`,
		}},
		{"gt", []string{"ci/diffusion/ground_truth/fox_1gpu.png", "ci/diffusion/ground_truth/waves_1gpu.mp4",
			"ci/diffusion/ground_truth/waves_1gpu_frame_last.png"}, []string{
			"(?m)^\\| `fox` \\| pass \\| new ci/diffusion/ground_truth/fox_1gpu.png \\|$",
			"(?m)^\\| `waves` \\| pass \\| new ci/diffusion/ground_truth/waves_1gpu.mp4<br>",
			`partition 0/2`, `partition 1/2`,
		}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			w := &workflowRun{t: t, origin: origin, artifacts: t.TempDir(), bin: bin, ghLog: filepath.Join(t.TempDir(), "gh.log"),
				inputs: map[string]string{"lane": "base", "mode": tc.mode, "gpu": "h100"}, secrets: map[string]string{prTokenSecret: prToken}}
			w.play(wf)
			log, err := os.ReadFile(w.ghLog)
			if err != nil {
				t.Fatalf("no pull request was opened: %v", err)
			}
			// The push (checkout's persisted token) and the pull request use the secret, never
			// GITHUB_TOKEN, whose pull request would start no workflow.
			if tok, _ := os.ReadFile(w.ghLog + ".token"); string(tok) != prToken {
				t.Errorf("gh pr create ran with GH_TOKEN %q, want the secret %s", tok, prTokenSecret)
			}
			if got := w.checkoutTokens["propose"]; len(got) != 1 || got[0] != prToken {
				t.Errorf("the propose job checks out with tokens %q, want the secret %s (its git push uses it)", got, prTokenSecret)
			}
			branch := "diffusion-" + tc.mode + "-h100-4242"
			if want := fmt.Sprintf("pr create --title diffusion: regenerate %s (h100) --body-file regenerate-body.md --head %s\n", tc.mode, branch); string(
				log) != want {
				t.Errorf("gh was run as %q, want %q", log, want)
			}
			body, err := os.ReadFile(w.ghLog + ".body")
			if err != nil {
				t.Fatal(err)
			}
			for _, re := range tc.body {
				if !regexp.MustCompile(re).Match(body) {
					t.Errorf("the pull request's body does not match %q:\n%s", re, body)
				}
			}
			changed := git(t, origin, "diff", "--name-only", "main", branch)
			for _, f := range tc.files {
				if !strings.Contains(changed, f+"\n") {
					t.Errorf("branch %s does not add %s; it changes:\n%s", branch, f, changed)
				}
			}
		})
	}

	// Without the secret: the first job fails with the one line that names the setting and the
	// consequence, before any GPU time; nothing is pushed, no pull request opened.
	t.Run("no token", func(t *testing.T) {
		origin := filepath.Join(t.TempDir(), "origin.git") // one no other subtest pushed to
		git(t, "", "clone", "-q", "--bare", seed, origin)
		w := &workflowRun{t: t, origin: origin, artifacts: t.TempDir(), bin: bin, ghLog: filepath.Join(t.TempDir(), "gh.log"),
			inputs: map[string]string{"lane": "base", "mode": "baseline", "gpu": "h100"}, mayFail: true}
		w.play(wf)
		if !strings.Contains(w.failed, "job plan step 1") || !strings.Contains(w.failed, prTokenLine) {
			t.Errorf("the workflow failed with %q, want the plan job's first step to say:\n%s", w.failed, prTokenLine)
		}
		if n := strings.Count(w.failed, "::error"); n != 1 {
			t.Errorf("%d error lines, want one:\n%s", n, w.failed)
		}
		if _, err := os.Stat(w.ghLog); err == nil {
			t.Error("a pull request was opened without the token")
		}
		if names, _ := filepath.Glob(filepath.Join(w.artifacts, "*")); len(names) > 0 {
			t.Errorf("the run jobs ran without the token: artifacts %v", names)
		}
		if branches := git(t, origin, "branch", "--list", "diffusion-*"); branches != "" {
			t.Errorf("pushed without the token: %s", branches)
		}
	})
}

// prTokenSecret is the secret the PR-opening example workflows push and open pull requests
// with; prToken its value in tests.
const (
	prTokenSecret = "DIFFUSION_CHECK_PR_TOKEN"
	prToken       = "github_pat_fake"
)

// prTokenLine is the line a PR-opening workflow fails with when the secret is not set: the
// repository setting GITHUB_TOKEN would need, and why even that would not do.
const prTokenLine = `::error title=No token to open the pull request::` +
	`Set the repository secret DIFFUSION_CHECK_PR_TOKEN (a fine-grained personal access token, or a GitHub App installation token, ` +
	`with contents: write and pull-requests: write). ` +
	`GITHUB_TOKEN may open a pull request only when Settings → Actions → General → "Allow GitHub Actions to create and approve pull requests" is on, ` +
	`and that pull request starts no workflow by itself, so its required checks would never report ` +
	`(docs/github-actions.md#pull-requests-opened-by-a-workflow).`

// TestPROpeningWorkflowsTakeAToken: every example workflow that opens a pull request (gh pr
// create) opens it and pushes with the secret DIFFUSION_CHECK_PR_TOKEN, never GITHUB_TOKEN,
// and fails first, with prTokenLine, when the secret is not set; its GITHUB_TOKEN only reads.
func TestPROpeningWorkflowsTakeAToken(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "workflows", "*.yml"))
	secret := "${{ secrets." + prTokenSecret + " }}"
	opening := 0
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			Jobs map[string]struct {
				Permissions any      `yaml:"permissions"`
				Steps       []ghStep `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(raw, &wf); err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		guarded := strings.Contains(string(raw), "echo '"+prTokenLine+"'")
		for jobName, job := range wf.Jobs {
			for _, st := range job.Steps {
				if !strings.Contains(st.Run, "gh pr create") {
					continue
				}
				opening++
				if st.Env["GH_TOKEN"] != secret {
					t.Errorf("%s: job %s opens its pull request with GH_TOKEN %q, want %s", name, jobName, st.Env["GH_TOKEN"], secret)
				}
				if !slices.ContainsFunc(job.Steps, func(c ghStep) bool {
					return strings.HasPrefix(c.Uses, "actions/checkout@") && c.With["token"] == secret
				}) {
					t.Errorf("%s: job %s pushes without checking out with %s", name, jobName, secret)
				}
				if p := fmt.Sprint(job.Permissions); strings.Contains(p, "write") {
					t.Errorf("%s: job %s gives GITHUB_TOKEN %s; the secret pushes and opens the pull request", name, jobName, p)
				}
				if !guarded {
					t.Errorf("%s: opens a pull request but does not fail first, with prTokenLine, without %s", name, prTokenSecret)
				}
			}
		}
	}
	if opening < 2 {
		t.Errorf("%d example workflows open a pull request, want regenerate and history", opening)
	}
}
