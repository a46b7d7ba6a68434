//go:build !linux

package gpumem

import "time"

const defaultTimer = timerRuntime

func newThreadSleeper() sleeper { return runtimeSleeper{epoch: time.Now()} }

func threadCPU() time.Duration { return 0 }
