//go:build !linux

package loadclock

// Now is false off Linux: SGLang's servers run on Linux, and no other system's monotonic
// clock is known to be the one Python's time.monotonic_ns() reads there.
func Now() (int64, bool) { return 0, false }
