//go:build linux

package inputfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadRefusesWhatIsNotARegularFile: a FIFO (which would block until a writer came),
// /dev/zero (which never ends), a symbolic link to it, and a folder are refused at once,
// before a byte is read.
func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "results.json")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/zero", link, dir} {
		_, err := Read(t.Context(), path, 1<<20)
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Read(%s) = %v, want refused as not a regular file", path, err)
		}
	}
}

// TestReadCapsTheSize reads a file of exactly the cap and refuses one byte more.
func TestReadCapsTheSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	const limit = 3*readChunk + 17 // more than one chunk, and not a multiple of one
	if err := os.WriteFile(path, make([]byte, limit), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(t.Context(), path, limit); err != nil || len(b) != limit {
		t.Fatalf("a file of the cap: %d bytes, %v", len(b), err)
	}
	_, err := Read(t.Context(), path, limit-1)
	if err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("a file past the cap: %v", err)
	}
}

// TestReadStopsWhenCancelled: a read whose context has ended (report got SIGTERM)
// returns the context's error instead of reading on.
func TestReadStopsWhenCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	if err := os.WriteFile(path, make([]byte, 2*readChunk), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Read(ctx, path, 4*readChunk); !errors.Is(err, context.Canceled) {
		t.Errorf("Read after cancel = %v, want context.Canceled", err)
	}
}

// TestOpenFileRefusesALinkAndLeavesItsTargetAlone: a lock file opened for writing
// (O_RDWR|O_CREATE) that is a symbolic link to a regular file is refused, not followed; the
// file it names keeps its bytes. A FIFO opened for writing is refused at once too (no reader
// is waited for).
func TestOpenFileRefusesALinkAndLeavesItsTargetAlone(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "precious")
	if err := os.WriteFile(target, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "run.lock")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.lock")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{link, fifo} {
		f, err := OpenFile(t.Context(), path, os.O_RDWR|os.O_CREATE, 0o644)
		if err == nil {
			f.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("OpenFile(%s) = %v, want refused as not a regular file", path, err)
		}
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "keep me\n" {
		t.Errorf("the link's target now holds %q (%v)", b, err)
	}
	// Read refuses the link too, though it names a regular file.
	if _, err := Read(t.Context(), link, 1<<20); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Read(link) = %v, want refused as a symbolic link", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Open(ctx, target); !errors.Is(err, context.Canceled) {
		t.Errorf("Open after cancel = %v, want context.Canceled", err)
	}
}
