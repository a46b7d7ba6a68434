package proc

import (
	"context"
	"testing"

	"golang.org/x/sys/unix"
)

// niceness is the niceness of the calling thread.
func niceness(t *testing.T) int {
	t.Helper()
	raw, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return 20 - raw
}

// TestNiceThread: under WithNice(ctx, 10) the goroutine's thread runs 10 nicer than the
// process, and no other goroutine's thread is touched; without a niceness
// nothing changes.
func TestNiceThread(t *testing.T) {
	base := niceness(t)
	if base > 9 {
		t.Skipf("the test runs at niceness %d: 10 more would not show", base)
	}
	got := make(chan int)
	go func() {
		NiceThread(WithNice(context.Background(), 10))
		got <- niceness(t)
	}()
	if n, want := <-got, base+10; n != want {
		t.Errorf("niced thread: niceness %d, want %d", n, want)
	}
	go func() {
		NiceThread(context.Background())
		got <- niceness(t)
	}()
	if n := <-got; n != base {
		t.Errorf("without a niceness: %d, want the process's %d", n, base)
	}
	if n := niceness(t); n != base {
		t.Errorf("the test's own thread: niceness %d, want %d", n, base)
	}
}
