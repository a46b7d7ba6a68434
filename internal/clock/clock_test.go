package clock

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestSleepWaitsOrEndsWithItsContext: Sleep takes exactly d on the (fake) clock, ends early
// with the context's error, and does not wait for d ≤ 0.
func TestSleepWaitsOrEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := Sleep(t.Context(), 3*time.Second); err != nil || time.Since(start) != 3*time.Second {
			t.Errorf("Sleep(3s) = %v after %v", err, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start = time.Now()
		if err := Sleep(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Errorf("Sleep(1h) with a 1s context = %v after %v", err, time.Since(start))
		}
		if err := Sleep(t.Context(), 0); err != nil {
			t.Errorf("Sleep(0) = %v", err)
		}
		if err := Sleep(ctx, -time.Second); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Sleep(-1s) on an ended context = %v, want its error", err)
		}
	})
}
