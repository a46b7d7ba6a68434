package runner

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// An input URL is fetched as SGLang's harness downloads one (_urlopen_with_retry): up to 4
// tries, 1, 2 and 4 s apart, an HTTP error included; its body is kept for the run's later
// requests; a body over the cap is not tried again; a file is read as it is.
func TestInputsFetchOnceWithSGLangsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		png := []byte("\x89PNG\r\n\x1a\n fake")
		var calls atomic.Int32
		failFirst := int32(2)
		hc := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			n := calls.Add(1)
			if n <= failFirst {
				return &http.Response{StatusCode: http.StatusServiceUnavailable, Body: io.NopCloser(strings.NewReader("busy")), Request: r}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(bytes.NewReader(png)), ContentLength: int64(len(png)), Request: r}, nil
		})}
		var told []string
		in := &inputs{hc: hc, logf: func(f string, a ...any) { told = append(told, f) }}
		start := time.Now()
		data, name, err := in.read(t.Context(), "https://example.com/imgs/edit_input.jpg?x=1")
		if err != nil || !bytes.Equal(data, png) || name != "edit_input.jpg" {
			t.Fatalf("read: %q %q %v", data, name, err)
		}
		if waited := time.Since(start); waited != 3*time.Second || calls.Load() != 3 {
			t.Errorf("waited %v over %d fetches, want 3s (1 s, then 2 s) over 3", waited, calls.Load())
		}
		if _, _, err := in.read(t.Context(), "https://example.com/imgs/edit_input.jpg?x=1"); err != nil || calls.Load() != 3 || len(told) != 1 {
			t.Errorf("the second read fetched again (%d fetches, %d told): %v", calls.Load(), len(told), err)
		}

		// Four failures: an error naming the URL and the tries, after 1 + 2 + 4 s.
		calls.Store(0)
		failFirst = 100
		start = time.Now()
		_, _, err = in.read(t.Context(), "https://example.com/dead.png")
		if err == nil || !strings.Contains(err.Error(), "input GET https://example.com/dead.png: HTTP 503 Service Unavailable (after 4 tries)") ||
			time.Since(start) != 7*time.Second {
			t.Errorf("dead URL after %v: %v", time.Since(start), err)
		}

		// A cancelled run stops waiting.
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, _, err := in.read(ctx, "https://example.com/other.png"); err == nil {
			t.Error("a cancelled read succeeded")
		}
	})
}
