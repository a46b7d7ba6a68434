package inputfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// readChunk is how much Read reads between looks at its context.
const readChunk = 1 << 20

// Read reads the regular file at path, at most limit bytes, and stops when ctx ends.
// Anything else is refused before a byte is read: a FIFO (opened without blocking, so that
// no writer is waited for), a device (/dev/zero never ends), a folder; a symbolic link is
// followed to what it names and judged by that.
func Read(ctx context.Context, path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
	}
	// O_NONBLOCK: a FIFO swapped in after the Stat opens at once instead of waiting for a
	// writer, and the Stat of the open file below refuses it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // opened read-only: nothing written to lose
	fi, err = f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
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
