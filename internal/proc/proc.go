package proc

import (
	"context"
	"os/exec"
	"time"
)

// Command is exec.CommandContext whose cancellation sends SIGTERM to the command's whole
// process group (a wrapper script's children too), and SIGKILL waitDelay later; Wait also stops
// waiting for output pipes after waitDelay.
func Command(ctx context.Context, waitDelay time.Duration, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	setProcessGroup(cmd)
	cmd.Cancel = func() error { return Terminate(cmd) }
	cmd.WaitDelay = waitDelay
	return cmd
}

// Group is exec.Command for a process whose lifetime the caller manages itself (a server
// under test, stopped with Terminate and KillGroup): it leads its own process group, and on
// Linux the kernel kills it when the caller dies.
func Group(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	setProcessGroup(cmd)
	return cmd
}
