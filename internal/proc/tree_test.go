//go:build linux

package proc

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSweepEndsAWorkerThatCalledSetsid starts a "server" whose worker leaves the process
// group with setsid: killing the group leaves the worker running (what the audit saw), and
// Sweep of a snapshot taken before the kill ends it and names it.
func TestSweepEndsAWorkerThatCalledSetsid(t *testing.T) {
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := Group("sh", "-c", "setsid sleep 600 & echo $! > "+filepath.Join(dir, "worker")+"; wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	worker := readPid(t, filepath.Join(dir, "worker"))
	t.Cleanup(func() { syscall.Kill(worker, syscall.SIGKILL) })
	// The worker has called setsid once it leads its own session (and runs sleep).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if sid, err := syscall.Getpgid(worker); err == nil && sid == worker {
			if _, _, name, ok := stat(worker); ok && name == "sleep" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker did not leave the group")
		}
	}
	tree := Snapshot(cmd.Process.Pid)
	if err := KillGroup(cmd); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // killed: its error says so
	if gone(worker, 0) {
		t.Fatal("the worker died with the group: nothing to prove")
	}
	killed, left := tree.Sweep()
	if len(left) > 0 || len(killed) != 1 || !strings.Contains(killed[0], "(sleep)") {
		t.Errorf("Sweep = killed %q, left %q; want the sleeping worker killed", killed, left)
	}
	if !gone(worker, 5*time.Second) {
		t.Errorf("worker %d alive after Sweep", worker)
	}
	if k, l := tree.Sweep(); len(k)+len(l) > 0 {
		t.Errorf("a second Sweep found %q %q", k, l)
	}
	_ = os.Remove(filepath.Join(dir, "worker"))
}
