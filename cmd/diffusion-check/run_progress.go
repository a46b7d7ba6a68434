package main

import (
	"fmt"
	"io"

	"sync"

	"github.com/diffusion-check/diffusion-check/internal/untrusted"
)

// actionsLog interleaves a run's progress lines and its servers' log lines on one stream of
// a GitHub Actions log: each server's lines go into a collapsible ::group::, which is closed
// before every progress line so that progress (and the heartbeats) stays visible when the
// groups are folded. Workflow commands are written here, in cmd, never by the runner.
type actionsLog struct {
	mu   sync.Mutex
	w    io.Writer
	open string // title of the group being written; "" when none is open
}

// writerFunc adapts a function to io.Writer.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// progress is the writer of the run's own lines: outside any group.
func (l *actionsLog) progress() io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.endGroup()
		return l.w.Write(p)
	})
}

// server is the writer of one server start's log lines: inside a group with this title.
func (l *actionsLog) server(title string) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.open != title {
			l.endGroup()
			fmt.Fprintf(untrusted.Raw(l.w), "::group::%s\n", untrusted.Visible(title))
			l.open = title
		}
		return l.w.Write(p)
	})
}

// close ends the group left open, if any.
func (l *actionsLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.endGroup()
}

func (l *actionsLog) endGroup() {
	if l.open != "" {
		fmt.Fprintln(untrusted.Raw(l.w), "::endgroup::")
		l.open = ""
	}
}
