package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/loadclock"
	"github.com/diffusion-check/diffusion-check/suite"
)

// Rule: load is the launcher line's CLOCK_MONOTONIC reading minus the reading just before the
// spawn (launch_server.py launch_server; test_server_load_clock_excludes_warmup); a server that
// logs no line keeps the first answer of /health, and says why; a line that cannot be this
// host's clock (before the spawn, or later than the time seen to pass) is refused the same way;
// the warm-up is from the first answer to ready either way. A log that has shown neither the
// line nor the ready marker when the server is ready is waited for (the lines are only still
// in the pipe), at most launcherLineWait.
func TestLoadClockRule(t *testing.T) {
	const startNs = int64(50_000_000_000)
	for _, tt := range []struct {
		name     string
		lines    []string
		marker   string
		monoOK   bool
		want     loadSplit
		waitedMs int64
	}{
		{"the launcher's line", []string{"[2026-09-12 10:00:01] INFO " + loadclock.Line(startNs+1_000_000_000), "INFO:     Application startup complete."},
			"Application startup complete.", true, loadSplit{load: time.Second, warmup: 2 * time.Second, launcher: true}, 0},
		{"no line, the marker seen", []string{"INFO:     Application startup complete."}, "Application startup complete.", true,
			loadSplit{load: 4 * time.Second, warmup: 2 * time.Second, missing: true,
				fallback: `the server logged no "[server-load] workers_ready_monotonic_ns=" line (SGLang's launcher logs it since PR #39206)`}, 0},
		{"neither yet: waits, then the old clock", nil, "Application startup complete.", true,
			loadSplit{load: 4 * time.Second, warmup: 2 * time.Second, missing: true,
				fallback: `the server logged no "[server-load] workers_ready_monotonic_ns=" line (SGLang's launcher logs it since PR #39206)`}, 1000},
		{"no marker to wait for", nil, "", true,
			loadSplit{load: 4 * time.Second, warmup: 2 * time.Second, missing: true,
				fallback: `the server logged no "[server-load] workers_ready_monotonic_ns=" line (SGLang's launcher logs it since PR #39206)`}, 0},
		{"a line before the spawn", []string{loadclock.Line(startNs - 5)}, "Application startup complete.", true,
			loadSplit{load: 4 * time.Second, warmup: 2 * time.Second, fallback: "is not after the launch"}, 0},
		{"a line later than the time seen", []string{loadclock.Line(startNs + 7_000_000_000)}, "Application startup complete.", true,
			loadSplit{load: 4 * time.Second, warmup: 2 * time.Second, fallback: "7s after the launch, later than the 6s seen to pass"}, 0},
		{"no monotonic clock here", []string{loadclock.Line(startNs + 1_000_000_000)}, "Application startup complete.", false,
			loadSplit{load: 4 * time.Second, warmup: 2 * time.Second, fallback: "CLOCK_MONOTONIC cannot be read"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				logFile, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
				if err != nil {
					t.Fatal(err)
				}
				spec := &suite.Server{Name: "sglang", Ready: suite.Readiness{LogMarker: tt.marker, Health: "/health"}}
				now := time.Now()
				srv := &server{spec: spec, log: newLogWatch(logFile, tt.marker), exited: make(chan struct{}),
					started: now.Add(-6 * time.Second), answered: now.Add(-2 * time.Second), ready: now, startMono: startNs, monoOK: tt.monoOK}
				defer srv.log.close()
				for _, line := range tt.lines {
					fmt.Fprintln(srv.log, line)
				}
				got := srv.loadClock(t.Context())
				if waited := time.Since(now).Milliseconds(); waited != tt.waitedMs {
					t.Errorf("waited %d ms for the log, want %d", waited, tt.waitedMs)
				}
				if got.load != tt.want.load || got.warmup != tt.want.warmup || got.launcher != tt.want.launcher || got.missing != tt.want.missing ||
					!strings.Contains(got.fallback, tt.want.fallback) || (tt.want.fallback == "") != (got.fallback == "") {
					t.Errorf("got %+v, want %+v", got, tt.want)
				}
			})
		})
	}
}

// The line arriving while loadClock waits ends the wait at once.
func TestLoadClockWaitsForTheLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logFile, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
		if err != nil {
			t.Fatal(err)
		}
		const marker = "Application startup complete."
		spec := &suite.Server{Name: "sglang", Ready: suite.Readiness{LogMarker: marker, Health: "/health"}}
		now := time.Now()
		srv := &server{spec: spec, log: newLogWatch(logFile, marker), exited: make(chan struct{}),
			started: now.Add(-6 * time.Second), answered: now.Add(-2 * time.Second), ready: now, startMono: 1, monoOK: true}
		defer srv.log.close()
		go func() {
			time.Sleep(100 * time.Millisecond)
			fmt.Fprintln(srv.log, loadclock.Line(1+int64(time.Second)))
		}()
		got := srv.loadClock(t.Context())
		if !got.launcher || got.load != time.Second || time.Since(now) != 100*time.Millisecond {
			t.Errorf("got %+v after %v, want the launcher's 1s after 100ms", got, time.Since(now))
		}
	})
}
