package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2).
const prSetChildSubreaper = 36

// BecomeSubreaper makes this process the child subreaper of everything it starts: a
// descendant whose parent dies (a server worker that called setsid, then lost its server) is
// reparented to this process instead of PID 1, so that it stays within reach of Sweep and is
// reaped here.
func BecomeSubreaper() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return fmt.Errorf("become child subreaper: %w", errno)
	}
	return nil
}

// Tree is a snapshot of a process and its descendants, each with its start time so that a
// pid reused since is not taken for it.
type Tree struct {
	procs []treeProc
}

type treeProc struct {
	pid   int
	start string // field 22 of /proc/PID/stat: start time in clock ticks since boot
	name  string
}

// stat reads the parent, start time and name of pid from /proc/PID/stat; ok is false when it
// is gone or already a zombie.
func stat(pid int) (ppid int, start, name string, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", "", false
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return 0, "", "", false
	}
	name = s[open+1 : end]
	f := strings.Fields(s[end+1:])
	// f[0] is field 3 (state), f[1] field 4 (ppid), f[19] field 22 (starttime).
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0, "", "", false
	}
	ppid, err = strconv.Atoi(f[1])
	if err != nil {
		return 0, "", "", false
	}
	return ppid, f[19], name, true
}

// children maps every live process to its children.
func children() map[int][]int {
	out := map[int][]int{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _, _, ok := stat(pid); ok {
			out[ppid] = append(out[ppid], pid)
		}
	}
	return out
}

// Snapshot records pid and every live descendant of it, whatever process group or session
// each is in (setsid does not change a process's parent).
func Snapshot(pid int) *Tree {
	t := &Tree{}
	t.add(children(), []int{pid}, map[int]bool{})
	return t
}

// add records the processes of roots and their descendants not seen yet; it returns the
// new ones.
func (t *Tree) add(kids map[int][]int, roots []int, seen map[int]bool) []treeProc {
	var added []treeProc
	for len(roots) > 0 {
		pid := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		if _, start, name, ok := stat(pid); ok {
			p := treeProc{pid: pid, start: start, name: name}
			t.procs = append(t.procs, p)
			added = append(added, p)
		}
		roots = append(roots, kids[pid]...)
	}
	return added
}

// alive reports whether p still runs as the process the snapshot saw.
func (p treeProc) alive() bool {
	_, start, _, ok := stat(p.pid)
	return ok && start == p.start
}

// Sweep ends what is left of a snapshot once its process group was killed: processes that
// left the group (setsid, setpgid) and so survived it, and their descendants. It stops them
// all first (SIGSTOP: a stopped process cannot fork), adds their children until there are no
// new ones, then kills them (SIGKILL) and reaps those that were reparented to this process.
// It returns, as "pid N (name)", those it had to kill and those it could not.
func (t *Tree) Sweep() (killed, left []string) {
	var live []treeProc
	for _, p := range t.procs {
		if p.alive() {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		return nil, nil
	}
	seen := map[int]bool{}
	for _, p := range t.procs {
		seen[p.pid] = true
	}
	for frontier := live; len(frontier) > 0; {
		roots := make([]int, 0, len(frontier))
		for _, p := range frontier {
			_ = syscall.Kill(p.pid, syscall.SIGSTOP) // one that is gone needs no stopping
			roots = append(roots, p.pid)
		}
		kids := children()
		var next []int
		for _, pid := range roots {
			next = append(next, kids[pid]...)
		}
		frontier = t.add(kids, next, seen)
		live = append(live, frontier...)
	}
	self := os.Getpid()
	for _, p := range live {
		if !p.alive() {
			continue
		}
		desc := fmt.Sprintf("pid %d (%s)", p.pid, p.name)
		if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			left = append(left, fmt.Sprintf("%s: %v", desc, err))
			continue
		}
		killed = append(killed, desc)
		// A child of this process (reparented here as its subreaper) becomes a zombie of
		// ours when it dies: reap it then, without making the stop wait for a process that
		// takes long to die (one in uninterruptible sleep in a driver).
		if ppid, _, _, ok := stat(p.pid); !ok || ppid == self {
			go func(pid int) {
				var ws syscall.WaitStatus
				_, _ = syscall.Wait4(pid, &ws, 0, nil) // ECHILD at once when not ours
			}(p.pid)
		}
	}
	return killed, left
}
