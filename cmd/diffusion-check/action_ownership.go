package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// The container action runs as root (it must, to write $GITHUB_OUTPUT and the workspace), so
// everything it writes into the checkout (results, reports, ground truth, baselines) would be
// root's, and on a persistent self-hosted runner the next job's actions/checkout could not
// clean the workspace (actions/runner#434, actions/checkout#1014). workspaceOwnership gives
// what the step wrote back to the workspace's owner when the command ends: on success,
// failure and cancel alike (SIGTERM cancels the command, which then returns).

// fileClockLag is how far a file's change time may lag time.Now: the kernel stamps files
// from a coarse clock that is up to one scheduler tick (at most 10ms) behind. A second is far
// beyond it and still excludes what earlier steps wrote.
const fileClockLag = time.Second

// maxOwnershipDepth bounds the folder nesting walked; each level holds a descriptor open.
// A checkout is never this deep; a tree planted to exhaust descriptors is left as it is.
const maxOwnershipDepth = 256

// workspaceOwnership starts the watch over $GITHUB_WORKSPACE; call the function it returns
// when the command has ended (actionCmd defers it). It does nothing outside a workflow or
// when this process is not root (then every file it writes is its user's already).
func workspaceOwnership(e env) func() {
	ws := e.gh.Workspace
	if ws == "" || os.Geteuid() != 0 {
		return func() {}
	}
	since := time.Now().Add(-fileClockLag)
	return func() {
		n, uid, gid, err := giveBack(ws, since)
		if n > 0 {
			fmt.Fprintf(e.stderr, "ownership: %d files and folders written under %s given to its owner %d:%d\n", n, ws, uid, gid)
		}
		if err != nil {
			e.action().Warningf("ownership: some files written under %s stay root's, and the next actions/checkout may fail to clean the workspace: %v", ws, err)
		}
	}
}

// giveBack chowns every file, folder and symlink under dir that this process's user owns and
// that changed at or after since to the owner (uid, gid) of dir itself, and returns how many
// it changed. Each folder is opened relative to its parent without following symlinks
// (O_NOFOLLOW), and links are changed themselves (AT_SYMLINK_NOFOLLOW): a symlink planted in
// the workspace, even one swapped in during the walk, never leads it outside.
func giveBack(dir string, since time.Time) (n, uid, gid int, err error) {
	// The workspace itself may be reached through a symlink (the runner's mount); that one
	// is the runner's, not a pull request's.
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("open workspace %s: %w", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd) // only read
		return 0, 0, 0, fmt.Errorf("stat workspace %s: %w", dir, err)
	}
	w := &ownerWalk{uid: int(st.Uid), gid: int(st.Gid), me: uint32(os.Geteuid()), since: since}
	if st.Uid == w.me { // the workspace is this user's: nothing to give back
		_ = unix.Close(fd) // only read
		return 0, w.uid, w.gid, nil
	}
	w.walk(fd, dir, 0)
	return w.changed, w.uid, w.gid, errors.Join(w.errs...)
}

// ownerWalk is one giveBack walk.
type ownerWalk struct {
	uid, gid int       // the workspace's owner
	me       uint32    // this process's user
	since    time.Time // the start of the command, less fileClockLag
	changed  int
	errs     []error
}

// maxOwnershipErrors bounds the errors one walk reports; the count of the rest is told.
const maxOwnershipErrors = 10

func (w *ownerWalk) fail(err error) {
	switch {
	case len(w.errs) < maxOwnershipErrors:
		w.errs = append(w.errs, err)
	case len(w.errs) == maxOwnershipErrors:
		w.errs = append(w.errs, errors.New("more errors left out"))
	}
}

// walk handles the entries of the open folder fd (named path in messages) and closes it.
func (w *ownerWalk) walk(fd int, path string, depth int) {
	f := os.NewFile(uintptr(fd), path)
	defer func() { _ = f.Close() }() // a folder only listed: closing it loses nothing
	if depth >= maxOwnershipDepth {
		w.fail(fmt.Errorf("%s: more than %d folders deep, not walked", path, maxOwnershipDepth))
		return
	}
	names, err := f.Readdirnames(-1)
	if err != nil {
		w.fail(fmt.Errorf("read folder %s: %w", path, err))
	}
	for _, name := range names {
		p := filepath.Join(path, name)
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if !errors.Is(err, unix.ENOENT) { // removed since the listing: nothing to own
				w.fail(fmt.Errorf("stat %s: %w", p, err))
			}
			continue
		}
		if st.Uid == w.me && !time.Unix(st.Ctim.Unix()).Before(w.since) {
			if err := unix.Fchownat(fd, name, w.uid, w.gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				w.fail(fmt.Errorf("chown %s: %w", p, err))
			} else {
				w.changed++
			}
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		child, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		switch {
		case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ENOENT):
			// Replaced by a symlink or a file since the stat, or removed: not followed.
		case err != nil:
			w.fail(fmt.Errorf("open folder %s: %w", p, err))
		default:
			w.walk(child, p, depth+1)
		}
	}
}
