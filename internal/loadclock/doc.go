// Package loadclock is SGLang's server load clock: the line its launcher logs once every
// worker is ready, and the clock that line reads (CLOCK_MONOTONIC), shared by the runner,
// which measures load with it, and the reference server, which logs the line as SGLang does.
package loadclock
