//go:build linux

package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHelperCaller is not a test: run by TestSIGKILLedCallerTakesItsGroupAlong as the
// caller that gets killed. It starts a "server" (a shell with a background grandchild) in
// its own group with a Guard, writes both pids, and waits to be killed.
func TestHelperCaller(t *testing.T) {
	dir := os.Getenv("PROC_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	cmd := Group("sh", "-c", "sleep 600 & echo $! > "+filepath.Join(dir, "grandchild")+"; wait")
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if os.Getenv("PROC_HELPER_GUARD") != "" {
		if _, err := StartGuard(cmd.Process.Pid); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.WriteFile(filepath.Join(dir, "child"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
	time.Sleep(10 * time.Minute)
}

// TestSIGKILLedCallerTakesItsGroupAlong kills a caller with SIGKILL, as the OOM killer or a
// runner's teardown does: with a Guard its child and grandchild die; without one, Pdeathsig
// still ends the child, but the grandchild lives on (which is why servers get a Guard).
func TestSIGKILLedCallerTakesItsGroupAlong(t *testing.T) {
	for _, guard := range []bool{true, false} {
		t.Run(fmt.Sprintf("guard=%v", guard), func(t *testing.T) {
			dir := t.TempDir()
			helper := exec.Command(os.Args[0], "-test.run=^TestHelperCaller$")
			helper.Env = append(os.Environ(), "PROC_HELPER_DIR="+dir)
			if guard {
				helper.Env = append(helper.Env, "PROC_HELPER_GUARD=1")
			}
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			child, grandchild := readPid(t, filepath.Join(dir, "child")), readPid(t, filepath.Join(dir, "grandchild"))
			t.Cleanup(func() { syscall.Kill(-child, syscall.SIGKILL) })
			helper.Process.Kill()
			helper.Wait()
			if !gone(child, 5*time.Second) {
				t.Errorf("child %d alive 5 s after its caller was killed", child)
			}
			if got := gone(grandchild, 5*time.Second); got != guard {
				t.Errorf("grandchild %d gone: %v, want %v", grandchild, got, guard)
			}
		})
	}
}

// TestGuardReleaseLeavesGroupAlone checks that a released guard kills nothing.
func TestGuardReleaseLeavesGroupAlone(t *testing.T) {
	cmd := Group("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { KillGroup(cmd); cmd.Wait() }()
	g, err := StartGuard(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Release(); err != nil {
		t.Fatal(err)
	}
	if gone(cmd.Process.Pid, 300*time.Millisecond) {
		t.Error("a released guard killed the group")
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			n, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return n
			}
		}
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// gone waits up to d for pid to exit (a zombie counts as gone: it runs nothing).
func gone(pid int, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
