package proc

import (
	"context"
	"os/exec"
	"strconv"
	"time"
)

// Nice is how many steps of scheduling niceness below this process (nice(1)) helper commands
// (Nice.Command) and work in this process (Nice.Run) run: for work that must not slow the
// process it measures, such as the decodes and the metric that validate a server's output
// while the server serves the next request. Zero or less leaves them at this process's
// priority.
type Nice int

// niced is the command line that runs name at niceness n: through nice -n N with name's full
// path, found here, so that a missing program is exec.ErrNotFound as without nice. Where nice
// or name cannot be found, or no niceness is asked for, it is name and args unchanged.
func (n Nice) niced(name string, args []string) (string, []string) {
	if n <= 0 {
		return name, args
	}
	nice, err := exec.LookPath("nice")
	if err != nil {
		return name, args
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return name, args
	}
	return nice, append([]string{"-n", strconv.Itoa(int(n)), path}, args...)
}

// Command is exec.CommandContext whose cancellation sends SIGTERM to the command's whole
// process group (a wrapper script's children too), and SIGKILL waitDelay later; Wait also stops
// waiting for output pipes after waitDelay. The command runs at this process's priority.
func Command(ctx context.Context, waitDelay time.Duration, name string, args ...string) *exec.Cmd {
	return Nice(0).Command(ctx, waitDelay, name, args...)
}

// Command is Command run n steps of niceness below this process.
func (n Nice) Command(ctx context.Context, waitDelay time.Duration, name string, args ...string) *exec.Cmd {
	name, args = n.niced(name, args)
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

// Tail is a bounded io.Writer that keeps the last N bytes written to it: enough of a helper's
// stderr for an error message (ffmpeg's, git's), whatever a broken input makes it print.
type Tail struct {
	N   int
	buf []byte
}

func (t *Tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.N {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.N:]...)
	}
	return len(p), nil
}

// Head is a bounded io.Writer that keeps the first N bytes written to it and notes that there
// were more (Over): a helper's answer on stdout, which must not grow without bound and must not
// be read cut.
type Head struct {
	N    int
	buf  []byte
	over bool
}

func (h *Head) Write(p []byte) (int, error) {
	if room := h.N - len(h.buf); len(p) > room {
		h.buf = append(h.buf, p[:max(room, 0)]...)
		h.over = true
		return len(p), nil
	}
	h.buf = append(h.buf, p...)
	return len(p), nil
}

// Bytes returns the first N bytes written.
func (h *Head) Bytes() []byte { return h.buf }

// Over reports whether more than N bytes were written.
func (h *Head) Over() bool { return h.over }

// Bytes returns the last N bytes written.
func (t *Tail) Bytes() []byte {
	if len(t.buf) > t.N {
		return t.buf[len(t.buf)-t.N:]
	}
	return t.buf
}
