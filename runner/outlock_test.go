package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/suite"
)

// TestRunRefusesAnOutAnotherRunHolds: while the lock of --out is held, Run returns an
// *outInUseError naming the folder and the holder's pid, and writes nothing there, with
// --force too; once it is released, the lock can be taken again.
func TestRunRefusesAnOutAnotherRunHolds(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	held, err := lockOut(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Parse(filepath.Join(t.TempDir(), "suite.yaml"),
		[]byte("servers:\n  ref: {builtin: {}}\ncases:\n  - {id: a, server: ref, modality: image, request: {size: 8x8}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(t.Context(), Options{Suite: s, Out: out, Force: true})
	var inUse *outInUseError
	if !errors.As(err, &inUse) || inUse.Dir != out || !strings.Contains(err.Error(), fmt.Sprintf("in use by another run (pid %d on ", os.Getpid())) {
		t.Fatalf("Run into a held --out: %v", err)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 || entries[0].Name() != lockFile {
		t.Errorf("--out holds %v after the refused run; want only %s", entries, lockFile)
	}
	if err := held.release(); err != nil {
		t.Fatal(err)
	}
	again, err := lockOut(t.Context(), out)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	if err := again.release(); err != nil {
		t.Fatal(err)
	}
}
