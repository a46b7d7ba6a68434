package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/diffusion-check/diffusion-check/results"
)

// TestSIGTERMKeepsResults stops a run with SIGTERM while its second request is in flight: the
// first request keeps its pass, the rest are marked cancelled, results.json is valid, the exit
// code says "could not run", and no server process outlives the run.
func TestSIGTERMKeepsResults(t *testing.T) {
	dir := t.TempDir()
	suitePath := filepath.Join(dir, "suite.yaml")
	err := os.WriteFile(suitePath, []byte(`
servers:
  ref:
    builtin: {step_ms: 100, load_ms: 10}
cases:
  - id: slow
    server: ref
    modality: image
    repeat: 3
    request: {prompt: a fox, size: 64x64, seed: 1, steps: 10}
  - id: never
    server: ref
    modality: image
    repeat: 2
    request: {prompt: a fox, size: 64x64, seed: 1, steps: 10}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	bin := filepath.Join(binDir, "diffusion-check")
	cmd := exec.Command(bin, "run", "--suite", suitePath, "--out", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForRequest(t, cmd, out, &stderr)
	waitForServerLine(t, cmd, out, "ref", `#2\] image`, &stderr) // request 2 is in flight (it takes 1 s)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("exit: %v, want exit status 3; stderr:\n%s", err, stderr.String())
	}
	res, err := results.ReadContext(t.Context(), filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatalf("results.json after SIGTERM: %v", err)
	}
	got := map[string][]results.Status{}
	for _, c := range res.Cases {
		for _, r := range c.Requests {
			got[c.ID] = append(got[c.ID], r.Status)
		}
	}
	want := map[string][]results.Status{
		"slow":  {results.Pass, results.Cancelled, results.Cancelled},
		"never": {results.Cancelled, results.Cancelled},
	}
	for id, w := range want {
		if strings.Join(statusStrings(got[id]), " ") != strings.Join(statusStrings(w), " ") {
			t.Errorf("case %s: requests %v, want %v", id, got[id], w)
		}
	}
	if res.Status != results.Cancelled {
		t.Errorf("run status %s, want cancelled", res.Status)
	}
	if left := serversOf(bin); len(left) > 0 {
		t.Errorf("server processes outlived the run: %v", left)
	}
}

func statusStrings(ss []results.Status) []string {
	var out []string
	for _, s := range ss {
		out = append(out, string(s))
	}
	return out
}

// serversOf lists the pids of `<bin> serve` processes still alive.
func serversOf(bin string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) > 1 && args[0] == bin && args[1] == "serve" {
			out = append(out, e.Name())
		}
	}
	return out
}
