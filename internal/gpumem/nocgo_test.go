//go:build !cgo

package gpumem

import (
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/results"
)

// TestWithoutCgo: a binary built with CGO_ENABLED=0 cannot load NVML; it says so, as it does
// without a driver, and still samples host memory.
func TestWithoutCgo(t *testing.T) {
	s := New(Options{procDir: fakeProc(t), timer: timerRuntime})
	defer s.Close()
	if n := len(s.DeviceNames()); n != 0 {
		t.Errorf("%d device names, want none", n)
	}
	hostOnly(t, s, "without cgo")
}

// TestDescribeWithoutCgo: the machine's GPU fields are left out, and the note says why.
func TestDescribeWithoutCgo(t *testing.T) {
	s := New(Options{procDir: fakeProc(t), timer: timerRuntime})
	defer s.Close()
	var m results.Machine
	s.Describe(&m)
	if m.Driver != "" || m.CUDA != "" || len(m.GPUs) != 0 || !strings.Contains(m.NVMLNote, "without cgo") {
		t.Errorf("Describe without cgo = %+v, want no GPU fields and a note naming cgo", m)
	}
}
