package proc

import (
	"context"
	"runtime"

	"golang.org/x/sys/unix"
)

// NiceThread lowers the scheduling priority of the calling goroutine's thread by the
// niceness of ctx (WithNice), as nice(1) lowers a child's: for work done in this process,
// such as the SSIM workers of a validation, that must not slow the server it measures. On
// Linux a niceness belongs to a thread, not to the process, so the goroutine is locked to its
// thread and the thread is niced; the goroutine must then end without unlocking it, and the
// runtime ends the thread with it instead of handing a niced thread to other goroutines. It
// must start no process either: a child's Pdeathsig follows the thread that started it
// (sysProcAttr). Without a niceness in ctx, or where the kernel refuses, nothing changes.
func NiceThread(ctx context.Context) {
	n, _ := ctx.Value(niceKey{}).(int)
	if n <= 0 {
		return
	}
	runtime.LockOSThread()
	tid := unix.Gettid()
	// The raw getpriority syscall answers 20 - nice (1 to 40), not the niceness itself.
	raw, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return
	}
	_ = unix.Setpriority(unix.PRIO_PROCESS, tid, min(20-raw+n, 19)) // refused: the thread runs as before
}
