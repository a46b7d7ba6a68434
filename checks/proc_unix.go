//go:build unix

package checks

import (
	"os/exec"
	"syscall"
)

// setProcessGroup makes a scorer the leader of its own process group, so that terminate
// reaches the model process a wrapper script started.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminate sends SIGTERM to the command's process group.
func terminate(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
}
