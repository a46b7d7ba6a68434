package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/baselines"
	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/githubfake"
	"github.com/diffusion-check/diffusion-check/results"
)

// noiseCases are the cases of both noise suites, one lane each; %s is where the noisy suite
// puts each case's faults and confirmation settings. Every case has a server of its own:
// the reference server counts requests per process, so confirmation requests continue the
// count (requests 3 and 4 after 2 requests). The servers report computed timings (the planned
// stage times): on a loaded machine a measured confirmation request can be as slow as the
// one-off slowdown (4.8 s was seen) and "reproduce" it; the planned times of a healthy
// request are the same on every machine.
const noiseCases = `
baselines: perf.json
servers:
  oneoff: {builtin: {step_ms: 20, load_ms: 10, timing: computed%s}}
  persistent: {builtin: {step_ms: 20, load_ms: 10, timing: computed%s}}
  strict: {builtin: {step_ms: 20, load_ms: 10, timing: computed%s}}
cases:
  - {id: oneoff, server: oneoff, lane: flaky, modality: image, request: {prompt: a fox, size: 64x64, seed: 1, steps: 4}%s}
  - {id: persistent, server: persistent, lane: persistent, modality: image, request: {prompt: a fox, size: 64x64, seed: 1, steps: 4}%s}
  - {id: strict, server: strict, lane: strict, modality: image, request: {prompt: a fox, size: 64x64, seed: 1, steps: 4}%s}
`

// noiseTolerances: a limit is 3× the worst healthy value, and the 10× slowdown of the faults
// is far past it.
const noiseTolerances = `{
    "tolerances": {
        "pr_test": {"e2e": 2.0, "denoise_stage": 2.0, "non_denoise_stage": 5.0, "denoise_step": 2.0, "denoise_agg": 2.0}
    },
    "sampling": {"step_fractions": [0.0, 0.5, 1.0]},
    "scenarios": {}
}
`

// TestNoiseSimulation simulates noisy runners with the reference server: baselines
// (and their spread) from a healthy run; then a one-off slow request (slow-at) that the
// confirmation requests do not reproduce, a persistent slowdown (slow-after) that they do,
// and the one-off again under the default on_unconfirmed: fail. With on_unconfirmed: flaky
// the first lane exits 0 and its commit status is success with a note; the second is red.
func TestNoiseSimulation(t *testing.T) {
	t.Parallel() // self-contained: its servers and ffmpeg run beside the others' (TestMain)
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tolerances.json", noiseTolerances)
	write("healthy.yaml", fmt.Sprintf(noiseCases, "", "", "", ", repeat: 3", ", repeat: 3", ", repeat: 3"))
	write("noisy.yaml", fmt.Sprintf(noiseCases,
		`, faults: ["slow-at=2:10"]`, `, faults: ["slow-after=1:10"]`, `, faults: ["slow-at=2:10"]`,
		", repeat: 2, confirm: 2, on_unconfirmed: flaky", ", repeat: 2, confirm: 2, on_unconfirmed: flaky", ", repeat: 2, confirm: 2"))
	// The runs record the commit they test (GITHUB_SHA outside a pull request event), which
	// report --publish checks against the event's head.
	head := "0123456789abcdef0123456789abcdef01234567"
	extraEnv := []string{"GITHUB_SHA=" + head}
	cli := binCLI(t, dir, func() []string { return append(cleanEnv(), extraEnv...) })

	// 1. Baselines and their spread from three healthy requests per case.
	if out, code := cli("run", "--suite", "healthy.yaml", "--mode", "baseline", "--out", "base"); code != 0 {
		t.Fatalf("baseline run: exit %d\n%s", code, out)
	}
	if out, code := cli("baseline", "--out", "perf.json", "--from", "tolerances.json", "base"); code != 0 ||
		!strings.Contains(out, "wrote perf.spread.json (the spread of ") {
		t.Fatalf("baseline: exit %d\n%s", code, out)
	}
	sf, err := baselines.LoadSpread(filepath.Join(dir, "perf.spread.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"oneoff", "persistent", "strict"} {
		if s := sf.For(id, checks.PerfE2E, ""); s == nil || s.N != 3 {
			t.Errorf("spread of %s perf.e2e = %+v, want n = 3", id, s)
		}
	}

	// 2. The noisy runs, one lane each.
	lanes := map[string]int{"flaky": 0, "persistent": 1, "strict": 1}
	res := map[string]*results.Result{}
	for lane, want := range lanes {
		out, code := cli("run", "--suite", "noisy.yaml", "--lane", lane, "--out", lane)
		if code != want {
			t.Errorf("lane %s: exit %d, want %d\n%s", lane, code, want, out)
		}
		r, err := results.ReadContext(t.Context(), filepath.Join(dir, lane, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		res[lane] = r
	}

	type outcome struct {
		Run      results.Status
		Requests []results.Status
		Confirm  []results.Status // statuses of the confirmation requests
		E2E      results.Status   // perf.e2e of request 2
		Label    results.Confirmation
		Spread   bool // request 2's perf.e2e carries the baseline spread
		Lines    int  // confirmation request lines in requests.jsonl
	}
	got := map[string]outcome{}
	for lane, r := range res {
		c := r.Cases[0]
		o := outcome{Run: r.Status}
		for _, rr := range c.Requests {
			o.Requests = append(o.Requests, rr.Status)
		}
		for _, rr := range c.Confirm {
			o.Confirm = append(o.Confirm, rr.Status)
			if !rr.Confirm || rr.Case != c.ID {
				t.Errorf("lane %s: confirmation request %+v not marked as one", lane, rr)
			}
		}
		for _, ck := range c.Requests[1].Checks {
			if ck.Name == checks.PerfE2E {
				o.E2E, o.Spread = ck.Status, ck.Spread != nil
				if ck.Confirm != nil {
					o.Label = *ck.Confirm
				}
			}
		}
		lines, _, err := results.ReadRequests(t.Context(), filepath.Join(dir, lane, results.RequestsFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if l.Confirm {
				o.Lines++
			}
		}
		got[lane] = o
	}
	want := map[string]outcome{
		"flaky": {Run: results.Flaky, Requests: []results.Status{results.Pass, results.Flaky}, Confirm: []results.Status{results.Pass, results.Pass},
			E2E: results.Flaky, Label: results.Confirmation{State: results.ConfirmNotReproduced, Passed: 2, Of: 2, Max: 2}, Spread: true, Lines: 2},
		// Request 3 (the first confirmation request) fails again: nothing more to learn.
		"persistent": {Run: results.Fail, Requests: []results.Status{results.Pass, results.Fail}, Confirm: []results.Status{results.Fail},
			E2E: results.Fail, Label: results.Confirmation{State: results.ConfirmReproduced, Failed: 1, Of: 1, Max: 2,
				Note: "stopped after 1 of 2: every failed check failed again"}, Spread: true, Lines: 1},
		"strict": {Run: results.Fail, Requests: []results.Status{results.Pass, results.Fail}, Confirm: []results.Status{results.Pass, results.Pass},
			E2E: results.Fail, Label: results.Confirmation{State: results.ConfirmNotReproduced, Passed: 2, Of: 2, Max: 2}, Spread: true, Lines: 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}

	// 3. The report: the flaky lane is success with a note, the persistent one red.
	f := githubfake.NewT(t, githubfake.Config{Owner: "octo", Repo: "diffusion", Token: "ghs_noise"})
	write("event.json", fmt.Sprintf(`{"number": 7, "pull_request": {"number": 7, "head": {"sha": %q}}, "repository": {"full_name": "octo/diffusion"}}`, head))
	extraEnv = []string{"GITHUB_API_URL=" + f.URL() + "/api/v3", "GITHUB_TOKEN=ghs_noise", "GITHUB_REPOSITORY=octo/diffusion",
		"GITHUB_EVENT_PATH=" + filepath.Join(dir, "event.json"), "GITHUB_SERVER_URL=https://github.com", "GITHUB_RUN_ID=1",
		"GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY=" + filepath.Join(dir, "summary.md"), "GITHUB_OUTPUT=" + filepath.Join(dir, "output.txt")}
	out, code := cli("report", "--publish", "--markdown", "report.md", "--junit", "junit.xml", "flaky", "persistent")
	if code != 1 {
		t.Errorf("report: exit %d, want 1 (the persistent lane failed)\n%s", code, out)
	}
	// The flaky request is a warning annotation, the reproduced failure an error.
	for _, re := range []string{
		`(?m)^::warning title=diffusion-check%3A lane flaky case oneoff request 2/2 flaky::perf\.[a-z0-9_.]+ \(flaky\).*not reproduced in 0/2 confirmation requests`,
		`(?m)^::error title=diffusion-check%3A lane persistent case persistent request 2/2 fail::.*reproduced in 1/1 confirmation requests`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("report output lacks an annotation matching %q:\n%s", re, out)
		}
	}
	if regexp.MustCompile(`(?m)^::error title=[^:]*oneoff`).MatchString(out) {
		t.Errorf("the flaky request is an error annotation:\n%s", out)
	}
	states := map[string]string{}
	for _, s := range f.Statuses() {
		states[s.Context] = s.State + ": " + s.Description
	}
	if s := states["diffusion-check/flaky"]; !strings.HasPrefix(s, "success: passed; 1 flaky: perf.e2e not reproduced in 0/2") {
		t.Errorf("flaky lane status %q, want success with the note", s)
	}
	if s := states["diffusion-check/persistent"]; !strings.HasPrefix(s, "failure: 1 of 2 requests failed") {
		t.Errorf("persistent lane status %q, want failure", s)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The spread is of two timed requests of the reference server, whose MAD may be under the
	// 1 ms resolution of a timing: "+N MAD" (">100 MAD" capped), the words for a spread under
	// the resolution, or, should their values coincide (ms with three decimals), the words for
	// no spread.
	for _, re := range []string{
		"1 flaky",
		`🟨 ` + "`oneoff`" + ` \(flaky\) request 2/2 · \*\*[^*]+\*\* vs limit ≤ [^(]+\(\*\*[0-9.]+× the limit\*\*, ` +
			`(\+[0-9.]+ MAD|>100 MAD|baseline spread under 1 ms|baseline had no spread \([0-9]+ requests\))\).* · ` +
			`_not reproduced in 0/2 confirmation requests_`,
		`❌ ` + "`persistent`" + ` \(persistent\) request 2/2 · .*(\+[0-9.]+ MAD|>100 MAD|baseline spread under 1 ms|baseline had no spread).* · ` +
			`_reproduced in 1/1 confirmation requests_`,
	} {
		if !regexp.MustCompile(re).Match(md) {
			t.Errorf("report.md does not match %q:\n%s", re, md)
		}
	}
	junit, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	_, tc, _ := strings.Cut(string(junit), `<testcase name="oneoff request 2/2" classname="flaky.oneoff"`)
	tc, _, _ = strings.Cut(tc, "</testcase>")
	if !regexp.MustCompile(`<property name="flaky" value="[0-9]+"></property>`).MatchString(tc) ||
		!strings.Contains(tc, "<system-out>flaky (failed, not reproduced") || strings.Contains(tc, "<failure") {
		t.Errorf("junit.xml: want the flaky request with a flaky property, named in system-out, and no failure:\n%s", tc)
	}
}

// binCLI returns a function that runs the diffusion-check binary in dir with the
// environment environ returns at the time of each call, and returns its combined output
// and exit code.
func binCLI(t *testing.T, dir string, environ func() []string) func(args ...string) (string, int) {
	return func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(filepath.Join(binDir, "diffusion-check"), args...)
		cmd.Dir = dir
		cmd.Env = environ()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("%v: %v", args, err)
		}
		return out.String(), cmd.ProcessState.ExitCode()
	}
}

// cleanEnv is this process's environment without what would make the binary think it runs
// in GitHub Actions.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GITHUB_") && !strings.HasPrefix(kv, "INPUT_") && !strings.HasPrefix(kv, "RUNNER_") {
			out = append(out, kv)
		}
	}
	return out
}
