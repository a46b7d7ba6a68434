package gpumem

import (
	"syscall"
	"time"
	"unsafe"
)

const defaultTimer = timerThread

// threadSleeper sleeps the calling OS thread in clock_nanosleep on CLOCK_MONOTONIC with an
// absolute deadline: the kernel keeps the schedule, and no Go timer or scheduler wake-up is
// involved. The caller must be locked to its thread.
type threadSleeper struct{}

func newThreadSleeper() sleeper { return threadSleeper{} }

const (
	clockMonotonic = 1
	timerAbstime   = 1
)

func (threadSleeper) now() int64 {
	var ts syscall.Timespec
	// The vDSO is not reachable from package syscall; the plain system call costs well
	// under a microsecond and happens once per tick.
	// CLOCK_MONOTONIC with a valid pointer cannot fail (clock_gettime(2)).
	_, _, _ = syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func (threadSleeper) sleepUntil(t int64) {
	ts := syscall.NsecToTimespec(t)
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_CLOCK_NANOSLEEP, clockMonotonic, timerAbstime, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		if e != syscall.EINTR {
			return
		}
	}
}

const rusageThread = 1 // RUSAGE_THREAD

// threadCPU is the CPU time (user and system) of the calling OS thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
