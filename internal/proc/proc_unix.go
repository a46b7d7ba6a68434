//go:build unix

package proc

import (
	"os/exec"
	"syscall"
)

func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = sysProcAttr()
}

// Terminate sends SIGTERM to a started command's process group (its pid: Command and Group
// made it the group leader).
func Terminate(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
}

// KillGroup sends SIGKILL to a started command's process group: whatever is left of it.
func KillGroup(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
