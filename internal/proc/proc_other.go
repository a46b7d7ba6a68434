//go:build !unix

package proc

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

// Terminate kills a started command; without process groups its children are not reached.
func Terminate(cmd *exec.Cmd) error { return cmd.Process.Kill() }

// KillGroup kills a started command; without process groups its children are not reached.
func KillGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
