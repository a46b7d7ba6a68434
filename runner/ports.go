package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// A server's port is chosen by diffusion-check (a port the kernel says is free) and bound by
// the server when it is ready, which for SGLang is after loading the model: seconds later. In
// that window another diffusion-check run on the machine (a second runner job, a parallel
// test) may be given the same free port, and if its server binds first, this run's readiness
// check and requests reach the other run's server. So a chosen port is also reserved among
// diffusion-check processes, by an exclusive lock on a file named after it in
// $TMPDIR/diffusion-check-ports, held until the server has stopped (the kernel drops it when
// the process ends, however it ends); a port that another run holds is not chosen. Where the
// lock cannot be taken (no flock on this system, a folder of another user) the port is the
// kernel's choice alone, as it always was.
const portLockDir = "diffusion-check-ports"

// maxPortTries bounds how many free ports are tried before giving up because every one of
// them is reserved by other runs.
const maxPortTries = 64

// portHold is a reserved port's lock; nil holds nothing.
type portHold struct{ f *os.File }

// release gives the port back to other runs.
func (h *portHold) release() {
	if h != nil {
		_ = releaseLock(h.f) // the lock is the open file; closing it is all there is to do
	}
}

// freePort asks the kernel for a free TCP port on the loopback interface.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close() //nolint:errcheck // only the port number was wanted of it
	return l.Addr().(*net.TCPAddr).Port, nil
}

// reservePort returns a free loopback port that no other diffusion-check run holds, and its
// hold (nil when it could not be reserved; the port is then the kernel's choice alone). offer
// gives the free ports to try (freePort; a test offers the same one again).
func reservePort(offer func() (int, error)) (int, *portHold, error) {
	dir := filepath.Join(os.TempDir(), portLockDir)
	canLock := lockedWhileOpen
	if canLock {
		// Shared by every user of the machine, like /tmp itself.
		if err := os.Mkdir(dir, 0o1777); err == nil {
			_ = os.Chmod(dir, 0o1777) // past the umask; a folder left 0755 only keeps others from reserving
		} else if !errors.Is(err, os.ErrExist) {
			canLock = false
		}
	}
	for range maxPortTries {
		port, err := offer()
		if err != nil || !canLock {
			return port, nil, err
		}
		f, err := openLock(context.Background(), filepath.Join(dir, strconv.Itoa(port))) // never waits: a non-blocking open and flock
		switch {
		case err == nil:
			return port, &portHold{f: f}, nil
		case !errors.Is(err, errLocked):
			return port, nil, nil // cannot reserve here: as before reservations
		}
		// Another run's server is about to bind it: choose again.
	}
	return 0, nil, fmt.Errorf("find a free port: %d free ports in a row were reserved by other diffusion-check runs (%s)", maxPortTries, dir)
}
