//go:build linux || darwin

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/results"
)

// TestSimultaneousRunsIntoOneOutOneWins starts six runs into one --out at once. The server of
// each waits for a gate file, so the run that took the lock holds it until the test opens the
// gate: the test waits for five runs to exit (an event, not a timing window), and each must
// have been refused with exit 3 naming the folder and the holder (its pid, once written), before writing
// anything (with --force too: a loser must not clear the winner's files). Then the gate opens and the one left finishes: requests.jsonl holds its one
// request once, and results.json its one case.
func TestSimultaneousRunsIntoOneOutOneWins(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	suitePath := writeSuite(t, dir, fmt.Sprintf(`
servers:
  gated:
    command: [sh, -c, 'while [ ! -e %s ]; do sleep 0.05; done; exec %s serve --addr 127.0.0.1:{port} --step-ms 1']
cases:
  - {id: only, server: gated, modality: image, request: {prompt: a fox, size: 64x64, seed: 1, steps: 2}}
`, gate, filepath.Join(binDir, "diffusion-check")))
	out := filepath.Join(dir, "out")
	const n = 6
	type ended struct {
		i      int
		err    error
		stderr string
	}
	done := make(chan ended, n)
	cmds := make([]*exec.Cmd, n)
	for i := range n {
		cmd := exec.Command(filepath.Join(binDir, "diffusion-check"), "run", "--suite", suitePath, "--out", out, "--force")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
		go func() { err := cmd.Wait(); done <- ended{i, err, stderr.String()} }()
	}
	t.Cleanup(func() {
		for _, c := range cmds {
			_ = c.Process.Kill() // those that ended already: nothing to kill
		}
	})
	pids := map[int]bool{}
	for _, c := range cmds {
		pids[c.Process.Pid] = true
	}
	left := map[int]bool{}
	for i := range n {
		left[i] = true
	}
	for range n - 1 {
		e := <-done
		delete(left, e.i)
		var ee *exec.ExitError
		if !errors.As(e.err, &ee) || ee.ExitCode() != 3 {
			t.Fatalf("run %d ended with %v before the gate opened, want exit 3; stderr:\n%s", e.i, e.err, e.stderr)
		}
		if !strings.Contains(e.stderr, "--out "+out+" is in use by another run (") {
			t.Errorf("run %d: stderr does not name the folder:\n%s", e.i, e.stderr)
		}
		// The holder writes its pid just after taking the lock: a run refused in between
		// says so, any other names the pid of one of the runs.
		holder := strings.Contains(e.stderr, "(a run that has not written its pid yet;")
		for pid := range pids {
			holder = holder || strings.Contains(e.stderr, fmt.Sprintf("(pid %d on ", pid))
		}
		if !holder {
			t.Errorf("run %d: stderr names no pid of the runs:\n%s", e.i, e.stderr)
		}
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e := <-done
	if !left[e.i] {
		t.Fatalf("run %d ended twice", e.i)
	}
	var ee *exec.ExitError
	if e.err != nil && (!errors.As(e.err, &ee) || ee.ExitCode() != 0 && ee.ExitCode() != 1) {
		t.Fatalf("the run holding the lock: %v, want a verdict (exit 0 or 1); stderr:\n%s", e.err, e.stderr)
	}
	reqs, warnings, err := results.ReadRequests(t.Context(), filepath.Join(out, results.RequestsFile))
	if err != nil || len(warnings) > 0 || len(reqs) != 1 {
		t.Errorf("requests.jsonl: %d requests, %v %v; want the one request of the one run", len(reqs), err, warnings)
	}
	res, err := results.ReadContext(t.Context(), filepath.Join(out, results.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cases) != 1 || len(res.Cases[0].Requests) != 1 {
		t.Errorf("results.json: %+v", res.Cases)
	}
	servers, err := os.ReadDir(filepath.Join(out, results.ServersDir))
	if err != nil || len(servers) != 1 {
		t.Errorf("servers/: %v %v; want the one server start of the one run", servers, err)
	}
}
