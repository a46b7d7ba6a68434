package runner

import (
	"context"
	"fmt"
	"sync"

	"github.com/diffusion-check/diffusion-check/results"
)

// disk is whether a write of the run failed for want of space. full is closed at the first
// such write (err): from then on a request the run could not check is an error of the
// machine, and no request waits for a performance.log record the server cannot write. A nil
// disk never fills up.
type disk struct {
	full  chan struct{}
	once  sync.Once
	first error
	logf  func(format string, args ...any)
}

func newDisk(logf func(format string, args ...any)) *disk {
	return &disk{full: make(chan struct{}), logf: logf}
}

// note records err when it is a write that failed for want of space, and says so once.
func (d *disk) note(err error) bool {
	if !results.IsDiskFull(err) {
		return false
	}
	if d == nil {
		return true
	}
	d.once.Do(func() {
		d.first = err
		close(d.full)
		d.logf("warning: the disk is full (%v): requests that cannot be checked are errors of this machine, not failures", err)
	})
	return true
}

// err is the first write that failed for want of space, or nil.
func (d *disk) err() error {
	if d == nil {
		return nil
	}
	select {
	case <-d.full:
		return d.first
	default:
		return nil
	}
}

// until is ctx, cancelled too when the disk fills up.
func (d *disk) until(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if d == nil {
		return ctx, cancel
	}
	go func() {
		select {
		case <-d.full:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// blame turns a request that the full disk kept from being checked (an errored check, no
// failed one) into an error of the machine: its own status says it was cut short, and its
// case gets the error, so that the run is `error` (exit 3), not a failure of the pull
// request. A request with a real failure keeps it.
func (d *disk) blame(rr *results.RequestResult, cr *results.CaseResult) {
	derr := d.err()
	if derr == nil || rr.Status == results.Cancelled {
		return
	}
	errored := false
	for _, ck := range rr.Checks {
		switch ck.Status {
		case results.Fail:
			return
		case results.Error:
			errored = true
		}
	}
	if !errored {
		return
	}
	rr.Status = results.Cancelled
	cr.Errors = append(cr.Errors,
		fmt.Sprintf("request %d/%d could not be checked: the disk is full (%v); an error of this machine, not of the pull request", rr.Index, rr.Of, derr))
}
