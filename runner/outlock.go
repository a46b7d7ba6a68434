package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/inputfile"
)

// lockFile is the file in --out that a run holds an exclusive lock on for as long as it runs,
// so that a second run into the same folder is refused instead of interleaving its requests
// into requests.jsonl and overwriting results.json. It says which process holds it. It is
// never removed: removing it would let a third run lock a new file while a second still
// holds the old one.
const lockFile = "run.lock"

// outInUseError is a --out folder that another run is writing to.
type outInUseError struct {
	Dir string
	// Holder is what the lock file says of the run holding it (pid, start time, host); empty
	// when it has not written that yet.
	Holder string
}

// Error names the folder and the run holding it.
func (e *outInUseError) Error() string {
	holder := e.Holder
	if holder == "" {
		holder = "a run that has not written its pid yet"
	}
	return fmt.Sprintf(
		"--out %s is in use by another run (%s; lock %s): two runs into one folder would mix their requests.jsonl and keep one results.json; "+
			"wait for it to finish or use another --out",
		e.Dir,
		holder,
		filepath.Join(e.Dir, lockFile),
	)
}

// outLock is the held lock of one --out.
type outLock struct {
	f *os.File
}

// lockOut creates dir when needed and takes the exclusive lock of dir/lockFile without
// waiting: an *outInUseError when another run holds it. It then writes who holds it. A
// lock file that is not a regular file (a symbolic link planted in --out, a FIFO) is refused:
// the file a link names is never opened, so never overwritten.
func lockOut(ctx context.Context, dir string) (*outLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create --out %s: %w", dir, err)
	}
	path := filepath.Join(dir, lockFile)
	f, err := openLock(ctx, path)
	if errors.Is(err, errLocked) {
		return nil, &outInUseError{Dir: dir, Holder: lockHolder(ctx, path)}
	}
	if err != nil {
		return nil, fmt.Errorf("lock --out %s: %w", dir, err)
	}
	host, _ := os.Hostname() // only to tell the holder apart; none is fine
	who := fmt.Sprintf("pid %d on %s, started %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	// The lock is what excludes; what it says is for people. A full disk must not stop the run
	// here: results.json and its space reserve decide that.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(who), 0)
	}
	return &outLock{f: f}, nil
}

// lockHolder is what a lock file says of its holder, on one line, bounded.
func lockHolder(ctx context.Context, path string) string {
	f, err := inputfile.Open(ctx, path)
	if err != nil {
		return ""
	}
	defer f.Close() //nolint:errcheck // opened read-only: nothing written to lose
	b := make([]byte, 256)
	n, _ := f.Read(b)
	line, _, _ := strings.Cut(string(b[:n]), "\n")
	return strings.TrimSpace(line)
}

// release gives the lock up (closing the file releases it).
func (l *outLock) release() error {
	if err := releaseLock(l.f); err != nil {
		return fmt.Errorf("release --out lock: %w", err)
	}
	return nil
}
