package gh

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/clock"
)

// RetryTransport retries GitHub API requests that failed for reasons that pass: 5xx, 429,
// and 403s that are rate limits (primary: X-RateLimit-Remaining 0; secondary: Retry-After or
// a "secondary rate limit" message). It waits as GitHub asks ("Rate limits for the REST API",
// docs.github.com: Retry-After; else X-RateLimit-Reset when no requests remain; else, for a
// rate limit that says neither, at least one minute, longer each time), a 5xx with
// exponential backoff and full jitter, and gives up — returning the last response as it came
// — once the next wait would pass MaxElapsed in total, or the request context's deadline (one
// deadline for a whole publish: see report --retry-budget). Transport errors (connection
// reset, a per-attempt timeout) are retried the same way. Requests that create content (POST,
// PATCH, PUT, DELETE) start WriteSpacing apart, as GitHub asks of them ("at least one second
// between each request").
type RetryTransport struct {
	Base http.RoundTripper // nil: http.DefaultTransport
	// MaxElapsed bounds the total time spent waiting between attempts (default 2 minutes).
	MaxElapsed time.Duration
	// Attempt bounds each attempt (0: no bound beyond the request's context).
	Attempt time.Duration
	// BaseDelay is the first backoff (default 1 s); the backoff doubles, up to 30 s.
	BaseDelay time.Duration
	// Sleep waits d or until ctx is done; nil sleeps for real. Tests inject a fake.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock X-RateLimit-Reset is read against; nil is time.Now.
	Now func() time.Time
	// Jitter returns a number in [0, 1); nil is math/rand/v2.
	Jitter func() float64
	// OnRetry, if set, hears of every retry (for logs).
	OnRetry func(Retry)
	// WriteSpacing is the least time between the starts of two requests that create content
	// (0: none).
	WriteSpacing time.Duration

	mu        sync.Mutex
	lastWrite time.Time // when the last write was let go (WriteSpacing)
}

// Retry is one retry, as OnRetry hears of it: the request, GitHub's status (0 for a transport
// error, then Err), the wait before the next attempt and why it is that long.
type Retry struct {
	Req    *http.Request
	Status int
	Err    error
	Wait   time.Duration
	Why    string
}

// secondaryWait is the least wait after a rate limit that names no time: GitHub asks for "at
// least one minute", and "an exponentially increasing amount of time" when it keeps failing
// (docs.github.com, "Rate limits for the REST API": exceeding the secondary rate limit).
const secondaryWait = time.Minute

// writeMethods are the methods GitHub asks to space (content creation).
func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// space holds a write until WriteSpacing has passed since the previous one was let go.
func (t *RetryTransport) space(req *http.Request, now func() time.Time, sleep func(context.Context, time.Duration) error) error {
	if t.WriteSpacing <= 0 || !isWrite(req.Method) {
		return nil
	}
	t.mu.Lock()
	at := now()
	if next := t.lastWrite.Add(t.WriteSpacing); !t.lastWrite.IsZero() && next.After(at) {
		at = next
	}
	t.lastWrite = at
	t.mu.Unlock()
	return sleep(req.Context(), at.Sub(now()))
}

// RoundTrip implements http.RoundTripper.
func (t *RetryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := cmp.Or[http.RoundTripper](t.Base, http.DefaultTransport)
	maxElapsed := cmp.Or(t.MaxElapsed, 2*time.Minute)
	delay := cmp.Or(t.BaseDelay, time.Second)
	now := t.Now
	if now == nil {
		now = time.Now
	}
	jitter := t.Jitter
	if jitter == nil {
		jitter = rand.Float64
	}
	sleep := t.Sleep
	if sleep == nil {
		sleep = clock.Sleep
	}
	var waited time.Duration
	secondary := 0 // rate limits that named no time, so far
	for attempt := 0; ; attempt++ {
		r, err := rewind(req)
		if err != nil {
			return nil, err
		}
		if err := t.space(r, now, sleep); err != nil {
			return nil, err
		}
		resp, cancel, err := t.once(base, r)
		wait, retry, why := time.Duration(0), false, ""
		status := 0
		if err != nil {
			if req.Context().Err() != nil {
				return nil, err
			}
			retry = true
		} else {
			status = resp.StatusCode
			wait, why, retry = retryAfter(resp, now)
		}
		if !retry {
			return withCancel(resp, cancel), err
		}
		switch {
		case why == rateLimitNoTime:
			wait = min(secondaryWait<<min(secondary, 10), maxRetryAfter)
			secondary++
		case wait <= 0:
			// Full jitter: anywhere in [0, backoff), at least a tenth of it.
			backoff := min(delay<<min(attempt, 5), 30*time.Second)
			wait = max(backoff/10, time.Duration(jitter()*float64(backoff)))
			why = "backing off"
		}
		deadline, hasDeadline := req.Context().Deadline()
		if waited+wait > maxElapsed || hasDeadline && now().Add(wait).After(deadline) {
			if err != nil {
				return nil, fmt.Errorf("%s %s: gave up after %d attempts: %w", req.Method, req.URL.Path, attempt+1, err)
			}
			if status == http.StatusForbidden || status == http.StatusTooManyRequests {
				// A rate limit that outlasts the budget is the cause: handing on the 403 would
				// read as missing permissions.
				rl := &RateLimitError{Method: req.Method, Path: req.URL.Path, Status: status, Attempts: attempt + 1,
					RetryAfter: resp.Header.Get("Retry-After"), Reset: resp.Header.Get("X-RateLimit-Reset"), Wait: wait, Left: maxElapsed - waited}
				if hasDeadline {
					rl.Left = min(rl.Left, max(deadline.Sub(now()), 0))
				}
				discard(resp, cancel)
				return nil, rl
			}
			return withCancel(resp, cancel), nil
		}
		discard(resp, cancel)
		if t.OnRetry != nil {
			t.OnRetry(Retry{Req: req, Status: status, Err: err, Wait: wait, Why: why})
		}
		if err := sleep(req.Context(), wait); err != nil {
			return nil, err
		}
		waited += wait
	}
}

// discard drops an answer that is not handed on (a retried one, or a rate limit given up
// on): its body is drained so that the connection can be reused, then closed, and the
// attempt's context (cancel, when not nil) is released. resp may be nil.
func discard(resp *http.Response, cancel context.CancelFunc) {
	if resp != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
	}
	if cancel != nil {
		cancel()
	}
}

// once makes one attempt, bounded by Attempt; the cancel func must run once the body is read.
func (t *RetryTransport) once(base http.RoundTripper, req *http.Request) (*http.Response, context.CancelFunc, error) {
	if t.Attempt <= 0 {
		resp, err := base.RoundTrip(req)
		return resp, nil, err
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.Attempt)
	resp, err := base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return resp, cancel, nil
}

// rewind returns a request that can be sent again, its body reset.
func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil {
			return nil, fmt.Errorf("%s %s: body cannot be replayed for a retry", req.Method, req.URL.Path)
		}
		b, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = b
	}
	return r, nil
}

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func withCancel(resp *http.Response, cancel context.CancelFunc) *http.Response {
	if resp != nil && cancel != nil {
		resp.Body = cancelBody{resp.Body, cancel}
	}
	return resp
}

// RateLimitError is a request GitHub kept refusing for its rate limit (429, or a 403 that
// is one) until the next wait it asked for would pass the retry budget: the cause, with
// what GitHub said, instead of a 403 that reads as missing permissions.
type RateLimitError struct {
	Method, Path      string
	Status, Attempts  int
	RetryAfter, Reset string        // the headers as GitHub sent them ("" when absent)
	Wait              time.Duration // the next wait, as asked (clamped to maxRetryAfter)
	Left              time.Duration // what was left of the retry budget
}

// Error says that GitHub rate-limited the request, what it asked, and why the wait was not
// made.
func (e *RateLimitError) Error() string {
	asked := "backing off"
	switch {
	case e.RetryAfter != "":
		asked = fmt.Sprintf("Retry-After: %s", e.RetryAfter)
	case e.Reset != "":
		asked = fmt.Sprintf("X-RateLimit-Reset: %s", e.Reset)
	}
	return fmt.Sprintf("%s %s: rate limited by GitHub (%d, %s): the next wait (%s) is more than the %s left of the retry budget; gave up after %d attempts "+
		"(see report --retry-budget)",
		e.Method, e.Path, e.Status, asked, e.Wait.Round(time.Second), e.Left.Round(time.Second), e.Attempts)
}

// maxRetryAfter clamps the wait a response asks for: a Retry-After of 99999999999 seconds
// must not overflow a time.Duration into a short or negative wait.
const maxRetryAfter = 24 * time.Hour

// rateLimitNoTime is why a rate limit that names no time waits at least secondaryWait.
const rateLimitNoTime = "a rate limit without Retry-After or X-RateLimit-Reset: GitHub asks to wait at least a minute"

// retryAfter says whether a response is worth retrying, how long GitHub asked to wait (0: not
// said, or a value that is no wait, such as a negative one: back off), at most
// maxRetryAfter, and where that came from (rateLimitNoTime for a rate limit that names no
// time).
func retryAfter(resp *http.Response, now func() time.Time) (time.Duration, string, bool) {
	code := resp.StatusCode
	rateLimited := false
	switch {
	case code >= 500 || code == http.StatusTooManyRequests:
		rateLimited = true
	case code == http.StatusForbidden:
		if resp.Header.Get("Retry-After") != "" || resp.Header.Get("X-RateLimit-Remaining") == "0" {
			rateLimited = true
			break
		}
		// A secondary rate limit may come with no header at all; its message says so.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		rateLimited = bytes.Contains(bytes.ToLower(body), []byte("rate limit"))
	}
	if !rateLimited || code == http.StatusNotImplemented {
		return 0, "", false
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		why := "Retry-After: " + s
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			if n <= 0 {
				return 0, why, true
			}
			return time.Duration(min(n, int64(maxRetryAfter/time.Second))) * time.Second, why, true
		}
		if t, err := http.ParseTime(s); err == nil {
			return min(max(t.Sub(now()), 0), maxRetryAfter), why, true
		}
	}
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		if n, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			// A second more: the reset is rounded down, and clocks differ.
			return min(max(time.Unix(n, 0).Sub(now()), 0)+time.Second, maxRetryAfter), "X-RateLimit-Reset: " + resp.Header.Get("X-RateLimit-Reset"), true
		}
	}
	if code == http.StatusForbidden || code == http.StatusTooManyRequests {
		return 0, rateLimitNoTime, true
	}
	return 0, "", true
}
