//go:build unix

package proc

import (
	"context"
	"os"
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
