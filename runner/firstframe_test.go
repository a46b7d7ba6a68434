package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/fetch"
)

// TestFetchFirstFrame: the pre-flight of a realtime first frame named by URL, against an
// httptest server: an image is recorded (size, SHA-256, sniffed type); a 404, a redirect to
// file:, a body over the cap (a small cap here; 64 MiB in a run), a body that is no image and
// a server that never answers each fail naming the URL and what failed.
func TestFetchFirstFrame(t *testing.T) {
	var frame bytes.Buffer
	if err := png.Encode(&frame, image.NewNRGBA(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/frame.png":
			_, _ = w.Write(frame.Bytes())
		case "/file":
			http.Redirect(w, r, "file:///etc/hostname", http.StatusFound)
		case "/page.png": // an error page served with 200 under an image's name
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write([]byte("<html><body>rate limited</body></html>"))
		case "/hang":
			started <- struct{}{}
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	defer ts.Close()
	lim := fetch.Limits{MaxBytes: int64(frame.Len()), Timeout: time.Minute, MaxRedirects: 5}

	ff, err := fetchFirstFrame(t.Context(), nil, ts.URL+"/frame.png", lim)
	sum := sha256.Sum256(frame.Bytes())
	if err != nil || ff.URL != ts.URL+"/frame.png" || ff.Bytes != int64(frame.Len()) || ff.SHA256 != hex.EncodeToString(sum[:]) ||
		ff.ContentType != "image/png" {
		t.Fatalf("image: %+v %v", ff, err)
	}

	for _, tc := range []struct {
		path, want string
		lim        fetch.Limits
	}{
		{"/missing.png", ": HTTP 404 Not Found", lim},
		{"/file", ": redirect to file:///etc/hostname: scheme \"file\": only http and https are fetched", lim},
		{"/frame.png", ": the body is larger than 10 bytes: not read further", fetch.Limits{MaxBytes: 10, Timeout: time.Minute}},
		{"/page.png", ": the body (38 bytes) is no image: it sniffs as text/html; charset=utf-8", lim},
	} {
		ff, err := fetchFirstFrame(t.Context(), nil, ts.URL+tc.path, tc.lim)
		if want := "GET " + ts.URL + tc.path + tc.want; err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", tc.path, err, want)
		}
		if tc.path == "/page.png" && (ff == nil || ff.Bytes != 38 || ff.SHA256 == "") {
			t.Errorf("a body that is no image is recorded all the same: %+v", ff)
		}
	}

	// A server that never answers: cancelling the run's context ends the fetch, once the
	// server holds the request (no timing).
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := fetchFirstFrame(ctx, nil, ts.URL+"/hang", lim)
		done <- err
	}()
	<-started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "GET "+ts.URL+"/hang: ") {
		t.Errorf("hanging server: %v", err)
	}
}
