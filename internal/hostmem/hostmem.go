package hostmem

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
)

// ParseStat reads the pid and parent pid from the content of /proc/PID/stat. The command name
// (field 2) is in parentheses and may itself hold spaces and parentheses, so the fields after
// it are found from the last ')'.
func ParseStat(b []byte) (pid, ppid int, err error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return 0, 0, errors.New("stat: no (comm) field")
	}
	pid, ok := atoi(bytes.TrimSpace(b[:open]))
	if !ok {
		return 0, 0, fmt.Errorf("stat: pid %q is not a number", bytes.TrimSpace(b[:open]))
	}
	// After ") ": state, then ppid.
	rest := b[end+1:]
	f := 0
	for i := 0; i < len(rest); {
		for i < len(rest) && rest[i] == ' ' {
			i++
		}
		j := i
		for j < len(rest) && rest[j] != ' ' && rest[j] != '\n' {
			j++
		}
		if j == i {
			break
		}
		if f == 1 {
			ppid, ok = atoi(rest[i:j])
			if !ok {
				return 0, 0, fmt.Errorf("stat: ppid %q is not a number", rest[i:j])
			}
			return pid, ppid, nil
		}
		f++
		i = j
	}
	return 0, 0, errors.New("stat: no ppid field")
}

// ParseRssAnon returns the RssAnon value of /proc/PID/status content in bytes. ok is false
// when the field is missing (kernel threads, a zombie, kernels before 4.5).
func ParseRssAnon(b []byte) (n uint64, ok bool) {
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		v, found := bytes.CutPrefix(line, []byte("RssAnon:"))
		if !found {
			continue
		}
		// "kB" (KiB) is the only unit the kernel writes.
		v, found = bytes.CutSuffix(bytes.TrimSpace(v), []byte("kB"))
		if !found {
			return 0, false
		}
		kib, good := atoi(bytes.TrimSpace(v))
		if !good {
			return 0, false
		}
		return uint64(kib) * 1024, true
	}
	return 0, false
}

// Descendants returns root and every process that descends from it, sorted, by scanning
// proc (normally "/proc") for parent links. A root that does not exist gives an empty list.
// It allocates; call it at a low rate (a process tree changes when workers start).
func Descendants(proc string, root int) ([]int, error) {
	ents, err := os.ReadDir(proc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", proc, err)
	}
	children := map[int][]int{}
	seenRoot := false
	buf := make([]byte, 0, 512)
	for _, e := range ents {
		pid, ok := atoi([]byte(e.Name()))
		if !ok {
			continue
		}
		b, err := readInto(filepath.Join(proc, e.Name(), "stat"), buf)
		if err != nil {
			continue // exited since the directory was read
		}
		buf = b[:0]
		_, ppid, err := ParseStat(b)
		if err != nil {
			continue
		}
		if pid == root {
			seenRoot = true
		}
		children[ppid] = append(children[ppid], pid)
	}
	if !seenRoot {
		return nil, nil
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	slices.Sort(out)
	return out, nil
}

func readInto(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // opened read-only: nothing written to lose
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, 512)
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil || n == 0 {
			return buf, nil
		}
	}
}

// Tree keeps /proc/PID/status open for each process of a tree, so that reading the tree's
// anonymous memory costs one pread per process and allocates nothing. It is not safe for
// concurrent use.
type Tree struct {
	proc  string
	files map[int]*os.File
	fds   []int // the descriptors of files, in pid order, for the allocation-free read
	buf   []byte
}

// NewTree returns an empty tree reading from proc (normally "/proc").
func NewTree(proc string) *Tree {
	return &Tree{proc: proc, files: map[int]*os.File{}, buf: make([]byte, 8192)}
}

// Set makes pids the processes of the tree: it opens the status files of new ones and
// closes those of processes no longer listed. A process that cannot be opened (it exited)
// is left out.
func (t *Tree) Set(pids []int) {
	keep := make(map[int]bool, len(pids))
	for _, p := range pids {
		keep[p] = true
		if _, ok := t.files[p]; ok {
			continue
		}
		f, err := os.Open(filepath.Join(t.proc, strconv.Itoa(p), "status"))
		if err != nil {
			continue
		}
		t.files[p] = f
	}
	for p, f := range t.files {
		if !keep[p] {
			_ = f.Close() // read-only status file of a process that has gone
			delete(t.files, p)
		}
	}
	t.fds = t.fds[:0]
	for _, p := range slices.Sorted(maps.Keys(t.files)) {
		t.fds = append(t.fds, int(t.files[p].Fd()))
	}
}

// Len is the number of processes whose memory the tree reads.
func (t *Tree) Len() int { return len(t.fds) }

// RssAnon returns the summed RssAnon of the tree's processes in bytes, and how many of them
// could be read (an exited process cannot).
func (t *Tree) RssAnon() (total uint64, read int) {
	for _, fd := range t.fds {
		n, err := syscall.Pread(fd, t.buf, 0)
		if err != nil || n <= 0 {
			continue
		}
		if v, ok := ParseRssAnon(t.buf[:n]); ok {
			total += v
			read++
		}
	}
	return total, read
}

// Close closes every open status file.
func (t *Tree) Close() {
	for p, f := range t.files {
		_ = f.Close() // read-only: nothing written to lose
		delete(t.files, p)
	}
	t.fds = t.fds[:0]
}

// atoi parses a non-negative decimal without allocating.
func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
