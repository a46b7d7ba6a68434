package fetch

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

var small = Limits{MaxBytes: 16, Timeout: time.Minute, MaxRedirects: 2}

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// TestGet: every bound of a fetch, each error naming the URL and what failed.
func TestGet(t *testing.T) {
	ts := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write([]byte("0123456789abcdef")) // exactly the cap
		case "/big":
			_, _ = w.Write([]byte("0123456789abcdefX"))
		case "/chunked-big": // no Content-Length: the cap is found while reading
			for range 3 {
				_, _ = w.Write([]byte("0123456789"))
				w.(http.Flusher).Flush()
			}
		case "/file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/r1":
			http.Redirect(w, r, "/r2", http.StatusFound)
		case "/r2":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/r0":
			http.Redirect(w, r, "/r1", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	})
	for _, tc := range []struct{ path, want string }{
		{"/missing", "GET " + ts.URL + "/missing: HTTP 404 Not Found"},
		{"/big", "GET " + ts.URL + "/big: the body is larger than 16 bytes: not read further"},
		{"/chunked-big", "GET " + ts.URL + "/chunked-big: the body is larger than 16 bytes"},
		{"/file", "GET " + ts.URL + "/file: redirect to file:///etc/passwd: scheme \"file\": only http and https are fetched"},
		{"/r0", "GET " + ts.URL + "/r0: more than 2 redirects"},
	} {
		_, err := Get(t.Context(), nil, ts.URL+tc.path, small)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
	}
	var se *StatusError
	if _, err := Get(t.Context(), nil, ts.URL+"/missing", small); !errors.As(err, &se) || se.Code != 404 {
		t.Errorf("404: %v, want a *StatusError", err)
	}
	var tl *TooLargeError
	if _, err := Get(t.Context(), nil, ts.URL+"/chunked-big", small); !errors.As(err, &tl) {
		t.Errorf("big: %v, want a *TooLargeError", err)
	}
	for _, p := range []string{"/ok", "/r1"} { // two redirects are allowed
		b, err := Get(t.Context(), nil, ts.URL+p, small)
		if err != nil || string(b.Data) != "0123456789abcdef" || b.ContentType != "image/png" {
			t.Errorf("%s: %q %q %v", p, b.Data, b.ContentType, err)
		}
	}
	for _, raw := range []string{"file:///etc/passwd", "ftp://example.com/a.png", "data:image/png;base64,AAAA", "http:///nohost", "/relative"} {
		if _, err := Get(t.Context(), nil, raw, small); err == nil || !strings.HasPrefix(err.Error(), "GET "+raw+": ") {
			t.Errorf("%s: %v, want refused before any request", raw, err)
		}
	}
}

// A server that never answers: the fetch's own timeout ends it (the server never answers, so
// any timeout expires: this one is short only to end the test). The run's context ending it
// is TestFetchFirstFrame's (runner).
func TestGetTimeout(t *testing.T) {
	ts := serve(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	lim := small
	lim.Timeout = 50 * time.Millisecond
	_, err := Get(t.Context(), nil, ts.URL+"/frame.png", lim)
	if !errors.Is(err, context.DeadlineExceeded) || err.Error() != "GET "+ts.URL+"/frame.png: not complete within 50ms: context deadline exceeded" {
		t.Errorf("timed out: %v", err)
	}
}

// TestGetErrorHidesPassword: a URL's password never reaches an error message (which a run
// prints and a comment may quote).
func TestGetErrorHidesPassword(t *testing.T) {
	_, err := Get(context.Background(), nil, "ftp://user:s3cret@example.com/a.png", Limits{MaxBytes: 1, Timeout: time.Second})
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "user:xxxxx@") {
		t.Errorf("error %v: want the URL with its password hidden", err)
	}
}

// Redact masks the password of a URL, and of text that looks like one.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:s3cret@example.com/a.png":       "http://user:xxxxx@example.com/a.png",
		"https://example.com/a.png":                  "https://example.com/a.png",
		"frames/a.png":                               "frames/a.png",
		"https://user:s3cret@exa mple.com/not a url": "https://user:xxxxx@exa mple.com/not a url",
		"git fetch of https://u:p@h/x: refused":      "git fetch of https://u:xxxxx@h/x: refused",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// A chunked body just over the cap costs the cap and a byte, not the doublings of a growing
// buffer: readCapped allocates its buffer once.
func TestReadCappedAllocatesOnce(t *testing.T) {
	const limit = 4 << 20
	body := strings.NewReader(strings.Repeat("x", limit+100))
	allocs := testing.AllocsPerRun(1, func() {
		body.Reset(strings.Repeat("x", limit+100))
		if _, err := readCapped(onlyReader{body}, -1, limit); !errors.Is(err, errTooLarge) {
			t.Fatalf("err %v, want too large", err)
		}
	})
	if allocs > 2 { // the buffer (and the string Reset builds)
		t.Errorf("%v allocations for one capped read, want the one buffer", allocs)
	}
	data, err := readCapped(strings.NewReader("0123456789"), 10, limit)
	if err != nil || string(data) != "0123456789" || cap(data) != 11 {
		t.Errorf("a body of its Content-Length: %q (cap %d), %v", data, cap(data), err)
	}
}

// onlyReader hides a reader's other methods (io.WriterTo), as a response body does.
type onlyReader struct{ r *strings.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }
