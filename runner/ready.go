package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptrace"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/diffusion-check/diffusion-check/suite"
)

// Readiness polling: the port is tried every readyPoll once the server said it is ready, and
// the health endpoint asked every healthPoll until then.
const (
	readyPoll  = 10 * time.Millisecond
	healthPoll = 50 * time.Millisecond
	// refusedWait bounds how long a request refused before sending anything waits for the
	// port to accept connections again before it counts as a failure.
	refusedWait = 5 * time.Second
)

// accepting reports whether the server's port accepts a TCP connection now.
func (s *server) accepting() bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)), time.Second)
	if err != nil {
		return false
	}
	_ = c.Close() // only whether it connected matters
	return true
}

// waitAccepting waits until the port accepts connections, the process exits, ctx ends or
// limit passes.
func (s *server) waitAccepting(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for !s.accepting() {
		if time.Now().After(deadline) {
			return fmt.Errorf("127.0.0.1:%d did not accept connections within %s", s.port, limit)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("server process exited (%w)", s.exitErr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(readyPoll):
		}
	}
	return nil
}

// refusedBeforeSend reports whether err is a connection refused before any byte of the
// request was written: the server never saw the request, so sending it again is safe.
func refusedBeforeSend(err error, wrote bool) bool {
	return err != nil && !wrote && errors.Is(err, syscall.ECONNREFUSED)
}

// generate sends one request of a case. A request refused before any byte was sent is never
// counted as the server's failure without checking readiness again: when the port accepts
// connections within refusedWait it is sent again (once), else the error says that the port
// no longer accepts connections. began is when the attempt that counts was sent.
func (s *server) generate(ctx context.Context, cl *client, c *suite.Case) (rep reply, began time.Time, err error) {
	for attempt := 1; ; attempt++ {
		// The transport calls the hook from its own goroutine.
		var wrote atomic.Bool
		tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaders: func() { wrote.Store(true) }})
		began = time.Now()
		rep, err = cl.generate(tctx, c)
		if !refusedBeforeSend(err, wrote.Load()) {
			return rep, began, err
		}
		if attempt == 2 {
			return rep, began, fmt.Errorf("%w (refused again after the port accepted connections)", err)
		}
		if werr := s.waitAccepting(ctx, refusedWait); werr != nil {
			return rep, began, fmt.Errorf("%w; nothing was sent, and the readiness check failed: %w", err, werr)
		}
	}
}
