//go:build unix && !linux

package proc

import "syscall"

// sysProcAttr makes the child lead its own process group; without Pdeathsig, only a Guard
// ends it when its parent dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
