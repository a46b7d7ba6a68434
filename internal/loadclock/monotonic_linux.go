package loadclock

import "golang.org/x/sys/unix"

// Now reads CLOCK_MONOTONIC in nanoseconds, the clock of Python's time.monotonic_ns() on
// Linux (and of every process of the host outside a time namespace).
func Now() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
