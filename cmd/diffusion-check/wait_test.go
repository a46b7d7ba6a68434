package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/results"
)

// waitFor reports whether cond came to hold within limit, checking it every few milliseconds.
// The tests wait for an event another process makes (a line in a file, a process gone), never
// for a duration; limit is a bound only a broken run reaches.
func waitFor(limit time.Duration, cond func() bool) bool {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline.C:
			return cond()
		}
	}
	return true
}

// waitForRequest returns once the run cmd has finished its first request (a line in
// out/requests.jsonl); it kills the run and fails the test when none has after a minute.
func waitForRequest(t *testing.T, cmd *exec.Cmd, out string, stderr *bytes.Buffer) {
	t.Helper()
	done := waitFor(time.Minute, func() bool {
		reqs, _, _ := results.ReadRequests(t.Context(), filepath.Join(out, results.RequestsFile))
		return len(reqs) >= 1
	})
	if !done {
		cmd.Process.Kill()
		t.Fatalf("no request finished within a minute; stderr:\n%s", stderr)
	}
}

// waitForServerLine returns once the server log of the run cmd (out/servers/01-NAME/server.log)
// has a line matching pattern: the reference server logs "[<id> #k] image ..." as it starts
// request k, so a signal sent then lands while request k is in flight.
func waitForServerLine(t *testing.T, cmd *exec.Cmd, out, server, pattern string, stderr *bytes.Buffer) {
	t.Helper()
	re := regexp.MustCompile(pattern)
	log := filepath.Join(out, "servers", "01-"+server, "server.log")
	done := waitFor(time.Minute, func() bool {
		b, _ := os.ReadFile(log)
		return re.Match(b)
	})
	if !done {
		cmd.Process.Kill()
		t.Fatalf("no line matching %q in %s within a minute; stderr:\n%s", pattern, log, stderr)
	}
}
