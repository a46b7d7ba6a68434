//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package runner

import (
	"context"
	"errors"
	"os"
)

// errLocked says that another process holds the lock.
var errLocked = errors.New("locked by another process")

// openLock creates path exclusively where there is no flock: a second run finds it and is
// refused. A run that dies without releasing it leaves it behind, and the next run is refused
// until someone removes it (the error names the file).
func openLock(_ context.Context, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil, errLocked
	}
	return f, err
}

// releaseLock closes and removes the lock file.
func releaseLock(f *os.File) error {
	err := f.Close()
	if rerr := os.Remove(f.Name()); err == nil {
		err = rerr
	}
	return err
}

// lockedWhileOpen says that openLock's lock outlives a process that dies holding it, so it
// is not taken for short-lived things such as ports.
const lockedWhileOpen = false
