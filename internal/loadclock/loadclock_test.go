package loadclock

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// The line as SGLang's launcher logs it (with its logger's prefix, or under a process
// manager's) is read; anything else is not.
func TestParseReadsTheLaunchersLine(t *testing.T) {
	for line, want := range map[string]int64{
		"[2026-09-12 10:01:02] [server-load] workers_ready_monotonic_ns=123456789": 123456789,
		"[server-load] workers_ready_monotonic_ns=5 trailing":                      5,
		Line(987654321): 987654321,
		"[server-load] workers_ready_monotonic_ns=":                     0,
		"[server-load] workers_ready_monotonic_ns=0":                    0,
		"[server-load] workers_ready_monotonic_ns=-5":                   0,
		"[server-load] workers_ready_monotonic_ns=99999999999999999999": 0,
		"[server-load] workers_ready_monotonic_ns=12x":                  0,
		"workers_ready_monotonic_ns=12":                                 0,
		"INFO:     Application startup complete.":                       0,
	} {
		got, ok := Parse(line)
		if got != want || ok != (want != 0) {
			t.Errorf("Parse(%q) = %d, %t; want %d", line, got, ok, want)
		}
	}
}

// The span is line − start, refused when the line is not after the start or later than the
// time seen to pass.
func TestSpanRefusesAnotherClock(t *testing.T) {
	if d, err := Span(1_000_000_000, 2_000_000_000, 6*time.Second); err != nil || d != time.Second {
		t.Errorf("1 s: %v, %v", d, err)
	}
	for _, tt := range []struct {
		start, line int64
		want        string
	}{
		{2_000_000_000, 1_000_000_000, "is not after the launch"},
		{2_000_000_000, 2_000_000_000, "is not after the launch"},
		{1, 7_000_000_002, "7s after the launch, later than the 6s seen to pass"},
	} {
		if _, err := Span(tt.start, tt.line, 6*time.Second); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Span(%d, %d): %v, want %q", tt.start, tt.line, err, tt.want)
		}
	}
}

// Now reads a clock that moves forward with the process's own monotonic time (Linux).
func TestNowIsTheMonotonicClock(t *testing.T) {
	a, ok := Now()
	if runtime.GOOS != "linux" {
		if ok {
			t.Error("Now off Linux")
		}
		return
	}
	start := time.Now()
	for time.Since(start) < time.Millisecond {
	}
	b, _ := Now()
	if !ok || b-a < int64(time.Millisecond) {
		t.Errorf("Now: %d then %d (ok %t), want at least 1 ms apart", a, b, ok)
	}
}
