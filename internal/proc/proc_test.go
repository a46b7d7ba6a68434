//go:build unix

package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCancelEndsTheGroup starts a shell that starts a grandchild, cancels, and checks that the
// grandchild is gone too: nothing a helper starts outlives the caller.
func TestCancelEndsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(t.Context())
	cmd := Command(ctx, time.Second, "sh", "-c", "sleep 60 & echo $! > "+pidFile+"; wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	for deadline := time.Now().Add(10 * time.Second); child == 0; {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the shell did not start its child")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Error("Wait after cancel: no error")
	}
	for deadline := time.Now().Add(5 * time.Second); syscall.Kill(child, 0) == nil; {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still alive after cancel", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNiceCommand: a helper started by Nice(n).Command runs n steps nicer than one started by
// Command (nice(1) without arguments prints its own niceness), and a missing program is
// exec.ErrNotFound with or without a niceness.
func TestNiceCommand(t *testing.T) {
	niceness := func(n Nice) int {
		t.Helper()
		out, err := n.Command(t.Context(), time.Second, "nice").Output()
		if err != nil {
			t.Fatal(err)
		}
		got, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	base := niceness(0)
	if base > 12 {
		t.Skipf("this process already runs at niceness %d", base)
	}
	if got := niceness(7); got != base+7 {
		t.Errorf("niceness of Nice(7).Command = %d, want %d", got, base+7)
	}
	if err := Command(t.Context(), time.Second, "diffusion-check-no-such-program").Run(); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("missing program: %v, want exec.ErrNotFound", err)
	}
	for _, n := range []Nice{0, 7} {
		if err := n.Command(t.Context(), time.Second, "diffusion-check-no-such-program").Run(); !errors.Is(err, exec.ErrNotFound) {
			t.Errorf("missing program: %v, want exec.ErrNotFound", err)
		}
	}
}

// Head keeps the first N bytes, however the writes are cut, and says that more came.
func TestHeadKeepsTheFirstBytes(t *testing.T) {
	h := &Head{N: 5}
	for _, w := range []string{"ab", "cd", "efg", "h"} {
		if n, err := h.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	if string(h.Bytes()) != "abcde" || !h.Over() {
		t.Errorf("%q over %t, want \"abcde\" over", h.Bytes(), h.Over())
	}
	h = &Head{N: 5}
	_, _ = h.Write([]byte("abcde"))
	if h.Over() {
		t.Error("exactly N bytes is not over")
	}
}
