package proc

import "syscall"

// sysProcAttr makes the child lead its own process group and die with its parent: Pdeathsig
// is sent when the thread that started it exits, which in a Go program is when the process
// does (the runtime does not end its threads; the one goroutine here that locks one, a
// Nice.Run thread's, never exits).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
