//go:build linux

package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadInputRefusesWhatIsNotARegularFile: a FIFO (which would block until a writer came),
// /dev/zero (which never ends), a symbolic link to it, and a folder are refused at once,
// before a byte is read.
func TestReadInputRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, ResultsFile)
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/zero", link, dir} {
		_, err := readInput(t.Context(), path, MaxInputBytes)
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("readInput(%s) = %v, want refused as not a regular file", path, err)
		}
	}
}

// TestReadInputCapsTheSize reads a file of exactly the cap and refuses one byte more.
func TestReadInputCapsTheSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), ResultsFile)
	const limit = 3*readChunk + 17 // more than one chunk, and not a multiple of one
	if err := os.WriteFile(path, make([]byte, limit), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := readInput(t.Context(), path, limit); err != nil || len(b) != limit {
		t.Fatalf("a file of the cap: %d bytes, %v", len(b), err)
	}
	_, err := readInput(t.Context(), path, limit-1)
	if err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("a file past the cap: %v", err)
	}
}

// TestReadInputStopsWhenCancelled: a read whose context has ended (report got SIGTERM)
// returns the context's error instead of reading on.
func TestReadInputStopsWhenCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), ResultsFile)
	if err := os.WriteFile(path, make([]byte, 2*readChunk), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := readInput(ctx, path, MaxInputBytes); !errors.Is(err, context.Canceled) {
		t.Errorf("readInput after cancel = %v, want context.Canceled", err)
	}
	if _, err := ReadResultsContext(ctx, path); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadResultsContext after cancel = %v, want context.Canceled", err)
	}
}
