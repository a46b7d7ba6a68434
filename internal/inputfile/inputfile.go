package inputfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// readChunk is how much Read reads between looks at its context.
const readChunk = 1 << 20

// Open opens the file at path for reading as a file that may be hostile: a regular file
// only. A symbolic link is refused, not followed (O_NOFOLLOW: a link planted in a store or an
// output folder must not make the tool read, or write, what it names); a FIFO is opened
// without blocking (O_NONBLOCK: no writer is waited for, so open cannot hang) and then
// refused, as are a device (/dev/zero never ends) and a folder. ctx ending first is an error.
func Open(ctx context.Context, path string) (*os.File, error) {
	return OpenFile(ctx, path, os.O_RDONLY, 0)
}

// OpenFile is Open with other flags, for a file the tool writes in a folder others can write
// to (a lock file: os.O_RDWR|os.O_CREATE): the same refusals, before a byte is read or written.
func OpenFile(ctx context.Context, path string, flag int, perm os.FileMode) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, perm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, Describe(fs.ModeSymlink))
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close() // the Stat error is what matters
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		_ = f.Close() // refused: nothing was read or written
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, Describe(fi.Mode()))
	}
	return f, nil
}

// Read reads the regular file at path (opened as Open does), at most limit bytes, and stops
// when ctx ends.
func Read(ctx context.Context, path string, limit int64) ([]byte, error) {
	f, err := Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // opened read-only: nothing written to lose
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d MiB such a file may have", path, fi.Size(), limit>>20)
	}
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()))
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		// One byte past the limit tells a file that grew while it was read.
		n, err := io.CopyN(&buf, f, min(readChunk, limit+1-int64(buf.Len())))
		if int64(buf.Len()) > limit {
			return nil, fmt.Errorf("%s: more than the %d MiB such a file may have", path, limit>>20)
		}
		if errors.Is(err, io.EOF) || n == 0 && err == nil {
			return buf.Bytes(), nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	}
}

// Find says whether the folder root holds a regular file at rel (a "/"-separated path below
// it), as a file a pull request may have put there: every folder on the way and the file
// itself are looked at without following a link (Lstat), so a link anywhere below root, a
// FIFO, a device or a folder where the file should be is an error naming it, never read. A
// path that is not there is (false, nil). root itself is the caller's: it may be a link.
func Find(root, rel string) (bool, error) {
	p := root
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, part := range parts {
		if part == "" || part == "." {
			continue
		}
		if part == ".." {
			return false, fmt.Errorf("%s: leaves %s", filepath.Join(root, rel), root)
		}
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return false, nil
		case err != nil:
			return false, err
		case st.Mode()&fs.ModeSymlink != 0:
			return false, fmt.Errorf("%s: not a regular file (%s)", p, Describe(st.Mode()))
		case i < len(parts)-1 && !st.IsDir():
			return false, nil // a file where a folder would be: nothing at rel
		case i == len(parts)-1 && !st.Mode().IsRegular():
			return false, fmt.Errorf("%s: not a regular file (%s)", p, Describe(st.Mode()))
		}
	}
	return true, nil
}

// Describe names a file's type, as Lstat gives it, for a refusal: "a symbolic link, not
// followed", "a folder", "a named pipe (FIFO)", "a device". Every refusal of a file that is
// not a regular one words the type this way.
func Describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link, not followed"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}
