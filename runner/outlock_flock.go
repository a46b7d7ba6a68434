//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package runner

import (
	"context"
	"errors"
	"os"
	"syscall"

	"github.com/diffusion-check/diffusion-check/internal/inputfile"
)

// errLocked says that another process holds the lock.
var errLocked = errors.New("locked by another process")

// openLock opens path and takes an exclusive flock on it without waiting. flock belongs to
// the open file, so the kernel releases it however the process ends (SIGKILL included), and
// two opens in one process exclude each other as two processes do.
// The file is opened as inputfile.OpenFile does: a symbolic link or a FIFO in its place is
// refused.
func openLock(ctx context.Context, path string) (*os.File, error) {
	f, err := inputfile.OpenFile(ctx, path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close() // not ours; the lock error is what matters
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	return f, nil
}

// releaseLock closes the lock file, which releases the flock.
func releaseLock(f *os.File) error { return f.Close() }

// lockedWhileOpen says that openLock's lock ends with the process, so a lock may be taken
// for something as short-lived as a port.
const lockedWhileOpen = true
