//go:build !cgo

package gpumem

import "testing"

// TestWithoutCgo: a binary built with CGO_ENABLED=0 cannot load NVML; it says so, as it does
// without a driver, and still samples host memory.
func TestWithoutCgo(t *testing.T) {
	s := New(Options{Proc: fakeProc(t), Timer: TimerRuntime})
	defer s.Close()
	if n := len(s.DeviceNames()); n != 0 {
		t.Errorf("%d device names, want none", n)
	}
	hostOnly(t, s, "without cgo")
}
