package clock

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx is done (then it returns ctx.Err()). A d ≤ 0 does not wait.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
