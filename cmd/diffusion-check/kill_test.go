//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/results"
)

// wrapperSuite is a suite whose server is a shell that ignores SIGTERM, starts the reference
// server and a grandchild (sleep) in the background and writes the pids: a server that
// takes its whole stop grace to stop, with children of its own.
func wrapperSuite(t *testing.T, dir string, grace string) string {
	t.Helper()
	return writeSuite(t, dir, fmt.Sprintf(`
servers:
  wrapped:
    command: [sh, -c, 'trap "" TERM; %s serve --addr 127.0.0.1:{port} --step-ms 100 & echo $! > serve.pid; sleep 600 & echo $! > sleep.pid; `+
		`echo $$ > sh.pid; while :; do sleep 0.1; done']
    stop_grace: %s
cases:
  - id: slow
    server: wrapped
    modality: image
    repeat: 3
    request: {prompt: a fox, size: 64x64, seed: 1, steps: 10}
`, filepath.Join(binDir, "diffusion-check"), grace))
}

// startRun starts `diffusion-check run` on a suite and waits until its first request finished.
func startRun(t *testing.T, suitePath, out string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "diffusion-check"), "run", "--suite", suitePath, "--out", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForRequest(t, cmd, out, &stderr)
	return cmd, &stderr
}

func pidOf(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

func waitGone(pids map[string]int, d time.Duration) []string {
	var left []string
	waitFor(d, func() bool {
		left = left[:0]
		for name, pid := range pids {
			if alive(pid) {
				left = append(left, fmt.Sprintf("%s (%d)", name, pid))
			}
		}
		return len(left) == 0
	})
	return left
}

// TestSIGKILLOfRunKillsServerAndItsChildren kills `run` with SIGKILL (the OOM killer, a
// runner's teardown) while a request is in flight: the server's shell, the reference server
// it started and its sleeping grandchild all die (in milliseconds; the test gives them 30 s,
// which only a process that survives reaches), none left under PID 1.
func TestSIGKILLOfRunKillsServerAndItsChildren(t *testing.T) {
	dir := t.TempDir()
	cmd, stderr := startRun(t, wrapperSuite(t, dir, "30s"), filepath.Join(dir, "out"))
	pids := map[string]int{
		"server shell": pidOf(t, filepath.Join(dir, "sh.pid")),
		"serve":        pidOf(t, filepath.Join(dir, "serve.pid")),
		"grandchild":   pidOf(t, filepath.Join(dir, "sleep.pid")),
	}
	t.Cleanup(func() { syscall.Kill(-pids["server shell"], syscall.SIGKILL) })
	killed := time.Now()
	cmd.Process.Kill()
	cmd.Wait()
	if left := waitGone(pids, 30*time.Second); len(left) > 0 {
		t.Fatalf("alive 30 s after run was killed: %v; stderr:\n%s", left, stderr)
	}
	t.Logf("server, its child and grandchild gone %s after SIGKILL of run", time.Since(killed).Round(time.Millisecond))
}

// TestSIGINTWritesResultsBeforeStoppingServers cancels a run with SIGINT, as GitHub does
// first when a job is cancelled (SIGTERM 7.5 s later, SIGKILL 2.5 s after that), while its
// server takes a 4 s stop grace: results.json (the finished request kept, the rest
// cancelled) is there while the server still runs (in milliseconds: the time is logged, not
// bounded, as load stretches it; what matters is that it comes before the stop); it is
// written again once the server is gone, and the exit code is 3.
func TestSIGINTWritesResultsBeforeStoppingServers(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	cmd, stderr := startRun(t, wrapperSuite(t, dir, "4s"), out)
	server := pidOf(t, filepath.Join(dir, "sh.pid"))
	t.Cleanup(func() { syscall.Kill(-server, syscall.SIGKILL) })
	waitForServerLine(t, cmd, out, "wrapped", `#2\] image`, stderr) // request 2 is in flight (it takes 1 s)
	resultsPath := filepath.Join(out, results.ResultsFile)
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// results.json exists from the start of the run (marked incomplete); the one written on
	// cancel is the first that says it finished after the signal.
	var took time.Duration
	var res *results.Result
	written := waitFor(10*time.Second, func() bool {
		r, err := results.ReadContext(t.Context(), resultsPath)
		if err != nil || r.FinishedAt.Before(sent) {
			return false
		}
		took, res = time.Since(sent), r
		return true
	})
	if !written {
		t.Fatalf("no results.json written after SIGINT within 10 s; stderr:\n%s", stderr)
	}
	serverAlive := alive(server)
	t.Logf("results.json %s after SIGINT (server still running: %v)", took.Round(time.Millisecond), serverAlive)
	if !serverAlive {
		t.Errorf("results.json after %s, once the server had stopped; want it before the stop", took)
	}
	if got := requestStatuses(res, "slow"); got != "pass cancelled cancelled" {
		t.Errorf("first results.json: requests %s, want pass cancelled cancelled", got)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("exit: %v, want exit status 3; stderr:\n%s", err, stderr)
	}
	if alive(server) {
		t.Error("server outlived the run")
	}
	final, err := results.ReadContext(t.Context(), resultsPath)
	if err != nil {
		t.Fatal(err)
	}
	if got := requestStatuses(final, "slow"); got != "pass cancelled cancelled" || final.Status != results.Cancelled {
		t.Errorf("final results.json: requests %s, run %s", got, final.Status)
	}
	if !strings.Contains(stderr.String(), "cancelled: results.json written in") {
		t.Errorf("stderr does not say results.json was written on cancel:\n%s", stderr)
	}
}

func requestStatuses(res *results.Result, id string) string {
	var out []string
	for _, c := range res.Cases {
		if c.ID == id {
			for _, r := range c.Requests {
				out = append(out, string(r.Status))
			}
		}
	}
	return strings.Join(out, " ")
}

// TestServerWorkerThatCalledSetsidDoesNotOutliveTheRun: a server whose worker leaves the
// process group with setsid (as the audit's did) no longer leaves it running after the run
// ends normally: the stop ends it and the log names it.
func TestServerWorkerThatCalledSetsidDoesNotOutliveTheRun(t *testing.T) {
	dir := t.TempDir()
	suitePath := writeSuite(t, dir, fmt.Sprintf(`
servers:
  escaping:
    command: [sh, -c, 'setsid sleep 600 & echo $! > worker.pid; exec %s serve --addr 127.0.0.1:{port} --step-ms 1']
cases:
  - {id: one, server: escaping, modality: image, request: {prompt: a fox, size: 64x64, seed: 1, steps: 2}}
`, filepath.Join(binDir, "diffusion-check")))
	code, log := runBinary(t, nil, nil, "run", "--suite", suitePath, "--out", filepath.Join(dir, "out"))
	worker := pidOf(t, filepath.Join(dir, "worker.pid"))
	t.Cleanup(func() { syscall.Kill(worker, syscall.SIGKILL) })
	if code != 0 && code != 1 {
		t.Fatalf("exit %d, want a verdict; log:\n%s", code, log)
	}
	if left := waitGone(map[string]int{"setsid worker": worker}, 5*time.Second); len(left) > 0 {
		t.Errorf("%s outlived the run; log:\n%s", strings.Join(left, ", "), log)
	}
	if want := fmt.Sprintf("warning: server escaping left processes running outside its process group (setsid): killed pid %d (sleep)", worker); !strings.Contains(
		log,
		want,
	) {
		t.Errorf("the log does not name the worker (%q):\n%s", want, log)
	}
}
