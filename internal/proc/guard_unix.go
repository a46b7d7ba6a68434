//go:build unix

package proc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// guardScript waits for a line on its standard input, the read end of a pipe whose only
// write end this process holds. "release" means the group was stopped in order; end of file
// means this process died (the kernel closes its descriptors however it dies, SIGKILL and
// the OOM killer included): then it kills the whole group. It ignores the signals a terminal
// or a runner sends to a process group, so that only the pipe decides.
const guardScript = `trap '' HUP INT TERM; read -r line; [ "$line" = release ] || kill -s KILL -- "-$1" 2>/dev/null; exit 0`

// Guard is a small watchdog process (sh) that kills a process group when its creator dies,
// however it dies. Pdeathsig reaches only the direct child; the guard reaches everything
// left in the group: a wrapper script's children, a server's worker processes. It does not
// reach processes that left the group (setsid, setpgid): nothing short of a cgroup does.
type Guard struct {
	cmd *exec.Cmd
	w   *os.File
}

// StartGuard starts a guard for process group pgid.
func StartGuard(pgid int) (*Guard, error) {
	r, w, err := os.Pipe() // close-on-exec: no other child inherits the write end
	if err != nil {
		return nil, fmt.Errorf("guard process group %d: %w", pgid, err)
	}
	cmd := exec.Command("/bin/sh", "-c", guardScript, "diffusion-check-guard", strconv.Itoa(pgid))
	cmd.Stdin = r
	// Its own group: a Ctrl-C to the terminal's group, or a signal to the server's, does not
	// reach it. No Pdeathsig: it must outlive this process to do its work.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("guard process group %d: %w", pgid, err)
	}
	return &Guard{cmd: cmd, w: w}, nil
}

// Release tells the guard that the group was stopped in order, and waits for it to exit.
func (g *Guard) Release() error {
	_, err := io.WriteString(g.w, "release\n")
	g.w.Close()
	done := make(chan error, 1)
	go func() { done <- g.cmd.Wait() }()
	select {
	case werr := <-done:
		if err == nil {
			err = werr
		}
	case <-time.After(5 * time.Second):
		g.cmd.Process.Kill()
		err = fmt.Errorf("guard %d did not exit after release", g.cmd.Process.Pid)
		<-done
	}
	return err
}
