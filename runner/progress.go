package runner

import (
	"fmt"
	"strings"
	"time"
)

// DefaultHeartbeat is how often a long wait (a server starting, a request in flight) says
// what it is doing when Options.Heartbeat is zero: often enough that a CI log never looks
// stuck for more than half a minute while a 20-minute start or a 10-minute hang runs out.
const DefaultHeartbeat = 20 * time.Second

// maxStatusLine bounds a server log line quoted in a heartbeat; the whole line is in the log.
const maxStatusLine = 160

// beat prints a heartbeat line every Options.Heartbeat until the returned stop is called:
// what is being waited for, elapsed / limit, and what status adds (the server's last log
// line, a video job's progress). stop waits for the printer to finish, so no heartbeat
// follows the line that reports the outcome.
func (r *run) beat(what string, limit time.Duration, status func() string) (stop func()) {
	every := r.opts.Heartbeat
	if every <= 0 {
		every = DefaultHeartbeat
	}
	began := time.Now()
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				line := fmt.Sprintf("%s: %s / %s", what, elapsed(time.Since(began), every), limit)
				if s := status(); s != "" {
					line += "; " + s
				}
				r.logf("%s", line)
			}
		}
	}()
	return func() {
		close(quit)
		<-finished
	}
}

// elapsed rounds a waiting time to the precision the heartbeat interval can show.
func elapsed(d, every time.Duration) time.Duration {
	if every >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// lastLogLine is the server's latest log line, shortened, for a heartbeat.
func lastLogLine(srv *server) string {
	tail := srv.log.lastLines(1)
	if len(tail) == 0 || strings.TrimSpace(tail[0]) == "" {
		return "server log: (nothing yet)"
	}
	line := strings.TrimSpace(tail[0])
	if r := []rune(line); len(r) > maxStatusLine {
		line = string(r[:maxStatusLine]) + "…"
	}
	return "server log: " + line
}

// requestStatus is what a heartbeat says about a request in flight: the video job's state
// and progress when the server reported one, and the server's last log line.
func requestStatus(cl *client, srv *server) string {
	s := lastLogLine(srv)
	if j := cl.job.Load(); j != nil {
		s = fmt.Sprintf("video job %s %s %.0f%%; %s", j.ID, j.Status, j.Progress, s)
	}
	return s
}
