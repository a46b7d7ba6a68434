package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStepsRunEveryStepAndSummarise runs scripts/steps (what scripts/test is made of) with
// steps that pass and fail: a failed step does not stop the ones after it, the summary names
// each with its outcome and exit status, and the status is non-zero exactly when one failed.
func TestStepsRunEveryStepAndSummarise(t *testing.T) {
	steps, err := filepath.Abs(filepath.Join("..", "..", "scripts", "steps"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		body  string
		code  int
		lines []string // the summary's lines, spaces squeezed, times as Ns
	}{
		// Each body's last step writes the file "after": the proof that it ran.
		{"one fails", `step first true
step broken sh -c 'exit 3'
step "after it" sh -c 'echo ran > after'
steps_summary`, 1, []string{
			"summary of 3 steps:",
			"first pass Ns",
			"broken FAIL Ns, exit 3",
			"after it pass Ns",
			"total Ns",
			"1 of 3 steps failed: broken",
		}},
		{"two fail", `step a false
step b true
step c env X=1 sh -c 'echo ran > after; exit 2'
steps_summary`, 1, []string{
			"summary of 3 steps:",
			"a FAIL Ns, exit 1",
			"b pass Ns",
			"c FAIL Ns, exit 2",
			"total Ns",
			"2 of 3 steps failed: a, c",
		}},
		{"all pass", `step a true
step b sh -c 'echo ran > after'
steps_summary`, 0, []string{
			"summary of 2 steps:",
			"a pass Ns",
			"b pass Ns",
			"total Ns",
			"all 2 steps passed",
		}},
	}
	seconds := regexp.MustCompile(`\b[0-9]+s\b`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			script := "set -uo pipefail\n. " + steps + "\n" + tt.body + "\n"
			cmd := exec.Command("bash", "-c", script)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			code := 0
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, out)
			}
			_, summary, ok := strings.Cut(string(out), "\nsummary of")
			if !ok {
				t.Fatalf("no summary:\n%s", out)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace("summary of"+summary), "\n") {
				got = append(got, seconds.ReplaceAllString(strings.Join(strings.Fields(l), " "), "Ns"))
			}
			if diff := cmp.Diff(tt.lines, got); diff != "" {
				t.Errorf("summary (-want +got):\n%s\nfull output:\n%s", diff, out)
			}
			if _, err := os.Stat(filepath.Join(dir, "after")); err != nil {
				t.Errorf("the step after the failure did not run: %v", err)
			}
		})
	}
}

// TestScriptsTestHasEveryStep: CI (.ci/run) runs exactly ./scripts/test, the README's test
// command, and scripts/test runs every step through scripts/steps, none behind set -e.
func TestScriptsTestHasEveryStep(t *testing.T) {
	root := filepath.Join("..", "..")
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	var commands []string
	for _, l := range strings.Split(string(ci), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "set ") && !strings.HasPrefix(l, "cd ") {
			commands = append(commands, l)
		}
	}
	if diff := cmp.Diff([]string{"./scripts/test"}, commands); diff != "" {
		t.Errorf(".ci/run commands (-want +got):\n%s", diff)
	}
	test, err := os.ReadFile(filepath.Join(root, "scripts", "test"))
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?m)^\s*set -[a-z]*e`).Match(test) {
		t.Error("scripts/test sets -e: the first failed step would hide every later one")
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^step ("[^"]+"|\S+) `).FindAllStringSubmatch(string(test), -1) {
		names = append(names, strings.Trim(m[1], `"`))
	}
	want := []string{"setup", "go mod tidy", "gofmt", "vet (simd)", "vet (no simd)", "test -race", "test kernels, avx512 off",
		"test portable (avx2 off)", "cpu-levels", "lint", "build-targets"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("steps of scripts/test (-want +got):\n%s", diff)
	}
	if !strings.HasSuffix(strings.TrimSpace(string(test)), "\nsteps_summary") {
		t.Error("scripts/test does not end with steps_summary (its exit status)")
	}
}
