package proc

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// niceness is the niceness of the calling thread.
func niceness(t *testing.T) int {
	t.Helper()
	raw, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
	if err != nil {
		t.Error(err)
	}
	return 20 - raw
}

// TestNiced: Nice(10).Run(f) runs f on a thread 10 nicer than the process, and the
// thread lives on after f (it is reused, and it is still one of the process's threads), so
// that no child a thread started loses it to Pdeathsig; without a niceness f runs on the
// caller's thread; the caller's thread is never touched.
func TestNiced(t *testing.T) {
	base := niceness(t)
	if base > 9 {
		t.Skipf("the test runs at niceness %d: 10 more would not show", base)
	}
	var tids []int
	for range 3 {
		Nice(10).Run(func() {
			if n, want := niceness(t), base+10; n != want {
				t.Errorf("niced thread: niceness %d, want %d", n, want)
			}
			tids = append(tids, unix.Gettid())
		})
	}
	if tids[1] != tids[0] || tids[2] != tids[0] {
		t.Errorf("one call at a time ran on threads %v, want one thread reused", tids)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tids[0])); err != nil {
		t.Errorf("the niced thread ended after its work: %v", err)
	}
	if n := niceness(t); n != base {
		t.Errorf("the caller's thread: niceness %d, want %d", n, base)
	}
	Nice(0).Run(func() {
		if n := niceness(t); n != base {
			t.Errorf("without a niceness: %d, want the process's %d", n, base)
		}
	})
}

// TestNicedKeepsChildren: a child started with Pdeathsig lives through many niced calls at
// once, on whichever threads they take (the revert of 65b5e55: a niced thread that ended
// could be the one that had started a server, and the kernel killed the server).
func TestNicedKeepsChildren(t *testing.T) {
	var children []*exec.Cmd
	for range 4 {
		cmd := exec.Command("sleep", "60")
		cmd.SysProcAttr = sysProcAttr()
		if err := cmd.Start(); err != nil {
			t.Skipf("sleep: %v", err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		children = append(children, cmd)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		tids = map[int]bool{}
	)
	for range 32 {
		wg.Go(func() {
			Nice(5).Run(func() {
				mu.Lock()
				tids[unix.Gettid()] = true
				mu.Unlock()
			})
		})
	}
	wg.Wait()
	for tid := range tids {
		if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); err != nil {
			t.Errorf("niced thread %d ended after its work: %v", tid, err)
		}
	}
	for _, c := range children {
		if err := c.Process.Signal(unix.Signal(0)); err != nil {
			t.Errorf("child %d is gone after the niced calls: %v", c.Process.Pid, err)
		}
	}
}
