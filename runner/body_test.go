package runner

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// zeros streams n zero bytes in MiB writes, each followed by a flush and a pause of every
// when every > 0. written, when not nil, counts the writes done.
func zeros(w http.ResponseWriter, n int64, every time.Duration, written *atomic.Int64) {
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	buf := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, int64(len(buf)))
		if _, err := w.Write(buf[:k]); err != nil {
			return
		}
		if written != nil {
			written.Add(1)
		}
		n -= k
		if every > 0 {
			w.(http.Flusher).Flush()
			time.Sleep(every)
		}
	}
}

// peakRSSMiB is this process's peak resident set size (VmHWM), in MiB.
func peakRSSMiB(t *testing.T) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	t.Skip("no VmHWM")
	return 0
}

// TestHugeBodyStreamsToDiskInBoundedMemory downloads a 3 GiB video body: it goes to disk
// through a small buffer, so the peak RSS of the process grows by a few MiB, not by
// gigabytes; with the default cap (1 GiB) the same body is refused at the cap and no partial
// file is left.
func TestHugeBodyStreamsToDiskInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 3 GiB")
	}
	const size = 3 << 30
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { zeros(w, size, 0, nil) }))
	defer srv.Close()
	dir := t.TempDir()
	runtime.GC()
	before := peakRSSMiB(t)
	c := &client{http: srv.Client(), base: srv.URL, dir: dir, maxBytes: 4 << 30}
	began := time.Now()
	f, err := c.download(t.Context(), "/v1/videos/x/content", filepath.Join(dir, "output.mp4"))
	if err != nil {
		t.Fatal(err)
	}
	after := peakRSSMiB(t)
	t.Logf("3 GiB body to disk in %s: peak RSS %.0f MiB before, %.0f MiB after (+%.0f MiB)", time.Since(began).Round(time.Millisecond), before, after,
		after-before)
	if f.Bytes != size {
		t.Errorf("wrote %d bytes, want %d", f.Bytes, size)
	}
	if after-before > 64 {
		t.Errorf("peak RSS grew by %.0f MiB for a streamed body", after-before)
	}
	os.Remove(f.Path)

	c.maxBytes = 0 // the default cap
	_, err = c.download(t.Context(), "/v1/videos/x/content", filepath.Join(dir, "capped.mp4"))
	var tl *tooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "response larger than 1024 MiB (the server's max_output_mb)") {
		t.Errorf("over the cap: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "capped.mp4")); !os.IsNotExist(err) {
		t.Errorf("a partial file is left: %v", err)
	}
}

// TestRequestTimeoutCoversTheBody: a body that trickles in must not outlast the request
// timeout; the download ends when the context's deadline passes, not when the body ends. What
// shows it is how much of the body the server had sent when the download gave up, not a wall-
// clock bound: a loaded machine only makes the server slower, so it sends less.
func TestRequestTimeoutCoversTheBody(t *testing.T) {
	const mib = 100
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		zeros(w, mib<<20, 50*time.Millisecond, &written) // 1 MiB per 50 ms: 5 s in all
	}))
	defer srv.Close()
	dir := t.TempDir()
	c := &client{http: srv.Client(), base: srv.URL, dir: dir}
	began := time.Now() // before the deadline is set: the deadline is 500 ms after its context's start
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	_, err := c.download(ctx, "/v1/videos/x/content", filepath.Join(dir, "output.mp4"))
	took, sent := time.Since(began), written.Load()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the deadline", err)
	}
	if sent >= mib || took < 500*time.Millisecond {
		t.Errorf("download ended %s after start, %d of %d MiB sent, with a 500 ms timeout: want it to end at the deadline, before the body", took, sent, mib)
	}
	t.Logf("trickling body stopped %s after start, %d of %d MiB sent (timeout 500 ms)", took.Round(time.Millisecond), sent, mib)
}

// TestJSONBodyCapped: a JSON response (decoded in memory) past its cap is an error naming
// the cap, read no further.
func TestJSONBodyCapped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { zeros(w, 3<<20, 0, nil) }))
	defer srv.Close()
	c := &client{http: srv.Client(), base: srv.URL, dir: t.TempDir(), maxBytes: 1 << 20}
	var v any
	err := c.getJSON(t.Context(), "/v1/videos/x", &v)
	if err == nil || !strings.Contains(err.Error(), "response larger than 1 MiB") {
		t.Errorf("err = %v", err)
	}
}
