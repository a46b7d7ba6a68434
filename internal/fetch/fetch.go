package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"time"
)

// Limits bound one fetch.
type Limits struct {
	// MaxBytes caps the body; one byte more is an error (*TooLargeError), never a cut body.
	MaxBytes int64
	// Timeout bounds the whole fetch: connection, redirects, headers and body.
	Timeout time.Duration
	// MaxRedirects is how many redirects are followed (0: none).
	MaxRedirects int
}

// StatusError is an answer whose status is not 2xx.
type StatusError struct{ Code int }

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.Code, http.StatusText(e.Code))
}

// TooLargeError is a body past Limits.MaxBytes.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the body is larger than %d bytes: not read further", e.Limit)
}

// Body is what a fetch returned: the bytes and the Content-Type the server claimed.
type Body struct {
	Data        []byte
	ContentType string
}

// checkURL refuses a URL that is not absolute http(s) with a host (file:, data:, ftp:, ...).
func checkURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme %q: only http and https are fetched", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("no host")
	}
	return nil
}

// Get fetches raw with hc (nil: http.DefaultClient) within lim. Every error starts with
// "GET <raw>: " (its password, if any, shown as xxxxx) and says what failed: the scheme, a redirect (to another scheme, or one too
// many), the status (*StatusError), the size (*TooLargeError), the timeout, or ctx's end.
func Get(ctx context.Context, hc *http.Client, raw string, lim Limits) (Body, error) {
	shown := raw // in errors, which reach logs and comments: a password in the URL is not shown
	fail := func(err error) (Body, error) { return Body{}, fmt.Errorf("GET %s: %w", shown, err) }
	u, err := url.Parse(raw)
	if err == nil {
		shown = u.Redacted()
		err = checkURL(u)
	}
	if err != nil {
		return fail(err)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	c := *hc // the caller's transport, this fetch's redirect rule
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > lim.MaxRedirects {
			return fmt.Errorf("more than %d redirects", lim.MaxRedirects)
		}
		if err := checkURL(req.URL); err != nil {
			return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)
		}
		return nil
	}
	tctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(tctx, http.MethodGet, raw, nil)
	if err != nil {
		return fail(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without url.Error's own "Get <url>:"
		}
		return fail(timedOut(ctx, tctx, lim, err))
	}
	defer resp.Body.Close() //nolint:errcheck // read-only: nothing to lose
	if resp.StatusCode/100 != 2 {
		return fail(&StatusError{Code: resp.StatusCode})
	}
	if resp.ContentLength > lim.MaxBytes {
		return fail(&TooLargeError{Limit: lim.MaxBytes})
	}
	data, err := readCapped(resp.Body, resp.ContentLength, lim.MaxBytes)
	if errors.Is(err, errTooLarge) {
		return fail(&TooLargeError{Limit: lim.MaxBytes})
	}
	if err != nil {
		return fail(fmt.Errorf("read the body after %d bytes: %w", len(data), timedOut(ctx, tctx, lim, err)))
	}
	return Body{Data: data, ContentType: resp.Header.Get("Content-Type")}, nil
}

var errTooLarge = errors.New("too large")

// readCapped reads a body of at most limit bytes into one buffer allocated once: its
// Content-Length and a byte when it says one, else limit and a byte (memory the kernel gives
// only as it is written). So a body, chunked or not, costs at most the cap and one byte, never
// the doublings of a growing buffer; the byte past the cap tells a body that is too large
// from one that ends at it (errTooLarge).
func readCapped(body io.Reader, length, limit int64) ([]byte, error) {
	size := limit + 1
	if length >= 0 && length < limit {
		size = length + 1
	}
	data := make([]byte, 0, size)
	for {
		n, err := body.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		switch {
		case int64(len(data)) > limit:
			return data, errTooLarge
		case errors.Is(err, io.EOF):
			return data, nil
		case err != nil:
			return data, err
		case len(data) == cap(data):
			// A body longer than its Content-Length said (net/http stops it at the length; a
			// server that lied is read on, up to the cap).
			grown := make([]byte, len(data), min(limit+1, int64(2*cap(data))))
			copy(grown, data)
			data = grown
		}
	}
}

// timedOut names the fetch's own timeout when it, not the caller's context, ended err.
func timedOut(ctx, tctx context.Context, lim Limits, err error) error {
	if ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("not complete within %s: %w", lim.Timeout, err)
	}
	return err
}

// userinfo is what looks like "user:password@" after a scheme, in text that is no URL.
var userinfo = regexp.MustCompile(`(://[^/@\s]*?):[^/@\s]*@`)

// Redact is raw with the password of a URL in it masked, as url.URL.Redacted masks it
// ("https://user:xxxxx@host/"), for every URL printed or recorded: a suite's URL may carry
// credentials, and logs, results and the PR comment are read by others. Text that does not
// parse as a URL has what looks like "user:password@" after "://" masked all the same.
func Redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		return u.Redacted()
	}
	return userinfo.ReplaceAllString(raw, "$1:xxxxx@")
}
