//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestReservedPortIsNotChosenAgain: a port another run holds is skipped even when the kernel
// offers it again (here, a freePort that offers the same port twice and then another), and a
// port is held until it is released.
func TestReservedPortIsNotChosenAgain(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	first, hold, err := reservePort(freePort)
	if err != nil {
		t.Fatal(err)
	}
	if hold == nil {
		t.Fatal("the port was not reserved")
	}
	if _, err := os.Stat(filepath.Join(os.TempDir(), portLockDir, strconv.Itoa(first))); err != nil {
		t.Fatalf("no lock file for port %d: %v", first, err)
	}
	other, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	if other == first {
		t.Skip("the kernel offered the same port twice in a row")
	}
	offers := []int{first, first, other}
	offer := func() (int, error) {
		p := offers[0]
		offers = offers[1:]
		return p, nil
	}
	got, hold2, err := reservePort(offer)
	if err != nil {
		t.Fatal(err)
	}
	if got != other || hold2 == nil {
		t.Errorf("while %d is held: got port %d (held %v), want %d", first, got, hold2 != nil, other)
	}
	hold2.release()
	// Released, the port can be reserved again.
	hold.release()
	offers = []int{first}
	again, hold3, err := reservePort(offer)
	if err != nil {
		t.Fatal(err)
	}
	defer hold3.release()
	if again != first || hold3 == nil {
		t.Errorf("after its release: got port %d (held %v), want %d", again, hold3 != nil, first)
	}
}

// TestEveryPortReserved: when every port the kernel offers is held by other runs, the error
// says so instead of returning one of them.
func TestEveryPortReserved(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	p, hold, err := reservePort(freePort)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.release()
	if got, _, err := reservePort(func() (int, error) { return p, nil }); err == nil {
		t.Errorf("got port %d, held by another reservation, and no error", got)
	}
}
