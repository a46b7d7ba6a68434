package proc

import (
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// Run runs f on an OS thread n steps of niceness below this process and returns when f
// does: for work done in this process, such as a validation's SSIM workers, that must not
// slow the server it measures. On Linux a niceness belongs to a thread, so the threads are
// this process's own: each is locked to a goroutine that never ends, niced once, and reused
// by later calls of the same niceness. They never end because a child's Pdeathsig follows
// the thread that started it (sysProcAttr): a thread handed back to the runtime niced would
// run other goroutines at the lower priority, and a thread left to end with its goroutine
// could be the one that had started a server, which the kernel would then kill. New threads
// the runtime makes while a locked one runs come from its template thread, not from a niced
// one (runtime.newm). f must start no process. With no niceness (n ≤ 0) f runs here; where
// the kernel refuses the niceness, f runs on the thread unchanged.
func (n Nice) Run(f func()) {
	if n <= 0 {
		f()
		return
	}
	nicedPool(min(int(n), 39)).run(f)
}

// threadPool is the niced threads of one niceness, and the inboxes of those now idle.
type threadPool struct {
	nice int
	mu   sync.Mutex
	idle []chan task
}

// task is one call of Run: done is closed once f has returned and its thread is idle.
type task struct {
	f    func()
	done chan struct{}
}

var (
	poolsMu sync.Mutex
	pools   = map[int]*threadPool{}
)

// nicedPool is the process's pool of threads at niceness n.
func nicedPool(n int) *threadPool {
	poolsMu.Lock()
	defer poolsMu.Unlock()
	p := pools[n]
	if p == nil {
		p = &threadPool{nice: n}
		pools[n] = p
	}
	return p
}

// run runs f on an idle thread of the pool, or on a new one when none is idle: the pool
// holds as many threads as were ever busy at once, which the callers bound. It returns once
// the thread is idle again, so that calls one after another take the same thread.
func (p *threadPool) run(f func()) {
	t := task{f: f, done: make(chan struct{})}
	p.mu.Lock()
	var inbox chan task
	if n := len(p.idle); n > 0 {
		inbox, p.idle = p.idle[n-1], p.idle[:n-1]
	} else {
		inbox = make(chan task, 1)
		go p.thread(inbox)
	}
	p.mu.Unlock()
	inbox <- t
	<-t.done
}

// thread locks its goroutine to its thread, nices the thread, and runs every task of its
// inbox, for the life of the process.
func (p *threadPool) thread(inbox chan task) {
	runtime.LockOSThread()
	tid := unix.Gettid()
	// The raw getpriority syscall answers 20 - nice (1 to 40), not the niceness itself.
	if raw, err := unix.Getpriority(unix.PRIO_PROCESS, tid); err == nil {
		_ = unix.Setpriority(unix.PRIO_PROCESS, tid, min(20-raw+p.nice, 19)) // refused: the thread runs as before
	}
	for t := range inbox {
		t.f()
		p.mu.Lock()
		p.idle = append(p.idle, inbox)
		p.mu.Unlock()
		close(t.done)
	}
}
