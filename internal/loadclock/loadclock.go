package loadclock

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Key is the log line's marker and field: SGLang's launcher logs
// `[server-load] workers_ready_monotonic_ns=%d` with time.monotonic_ns() once every worker
// reported ready, before its HTTP server exists and before the warm-up
// (runtime/launch_server.py launch_server, sgl-project/sglang @ 013fb6b0cc46; PR #39206,
// 2026-09-12). Its logger puts its own prefix in front.
const Key = "[server-load] workers_ready_monotonic_ns="

// Line is the message SGLang's launcher logs at monotonic nanoseconds ns.
func Line(ns int64) string { return fmt.Sprintf("%s%d", Key, ns) }

var linePattern = regexp.MustCompile(`\[server-load\] workers_ready_monotonic_ns=(\d{1,19})\b`)

// Parse reads the line's monotonic nanoseconds from a log line, false when the line is not
// it (or its number does not fit an int64).
func Parse(line string) (int64, bool) {
	m := linePattern.FindStringSubmatch(line)
	if m == nil {
		return 0, false
	}
	ns, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || ns <= 0 {
		return 0, false
	}
	return ns, true
}

// Span is the load a server's line gives: from start (Now read just before the server was
// spawned) to the line's reading. It is an error when the line cannot be this host's clock:
// before the spawn, or after upper (the time the caller saw pass, which the line cannot
// exceed: the server had logged it by then).
func Span(start, line int64, upper time.Duration) (time.Duration, error) {
	d := time.Duration(line - start)
	switch {
	case line <= start:
		return 0, fmt.Errorf("the server's workers_ready_monotonic_ns=%d is not after the launch (%d): its clock is not this host's CLOCK_MONOTONIC", line, start)
	case d > upper:
		return 0, fmt.Errorf("the server's workers_ready_monotonic_ns=%d is %s after the launch, later than the %s seen to pass: "+
			"its clock is not this host's CLOCK_MONOTONIC", line, d.Round(time.Millisecond), upper.Round(time.Millisecond))
	}
	return d, nil
}
