//go:build !unix

package media

import (
	"os/exec"
)

func setProcessGroup(*exec.Cmd) {}

func terminate(cmd *exec.Cmd) error { return cmd.Process.Kill() }
