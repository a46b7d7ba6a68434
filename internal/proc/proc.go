// Package proc starts helper processes (ffmpeg, ffprobe, scorers) so that none outlives its
// caller: each leads its own process group, and cancelling the context terminates the group.
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
