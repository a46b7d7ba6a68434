package gh

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
)

// rawGitHub is a GitHub that answers every request with answer, counting them, and a
// Client on it whose retries do not really sleep. It stands for a broken or hostile API
// that the fake GitHub (which answers as GitHub does) never is.
func rawGitHub(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) (*Client, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	rt := &RetryTransport{Sleep: (&sleeper{}).sleep, MaxElapsed: time.Minute, Jitter: func() float64 { return 0.5 }}
	c, err := New(Env{APIURL: srv.URL + "/api/v3", Token: token, Repository: "octo/diffusion"}, rt)
	if err != nil {
		t.Fatal(err)
	}
	self := ActionsBot
	c.Self = &self
	return c, &n
}

// TestPaginationLoopIsNamed: a Link header that leads from page 2 back to
// page 1 is stopped at once, naming the loop, instead of being followed until the deadline
// (2,217 requests in 2 minutes, before).
func TestPaginationLoopIsNamed(t *testing.T) {
	c, n := rawGitHub(t, func(w http.ResponseWriter, r *http.Request) {
		next := "2"
		if r.URL.Query().Get("page") == "2" {
			next = "1"
		}
		w.Header().Set("Link", fmt.Sprintf(`<http://%s%s?page=%s&per_page=100>; rel="next"`, r.Host, r.URL.Path, next))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, "[]")
	})
	_, err := c.comments(t.Context(), 7, marker)
	if err == nil || !strings.Contains(err.Error(), "list comments of octo/diffusion#7: the Link header of page 2 names page 1, already read: a pagination loop") {
		t.Errorf("a Link loop: %v", err)
	}
	if got := n.Load(); got != 2 {
		t.Errorf("%d requests, want 2", got)
	}
	p := newPager("x")
	for page := 1; page <= maxPages; page++ {
		if _, err := p.next(page, githubResponse(page+1)); err != nil {
			if page != maxPages || !strings.Contains(err.Error(), "more than 1000 pages") {
				t.Fatalf("page %d: %v", page, err)
			}
			return
		}
	}
	t.Error("a listing that never ends was not stopped")
}

// TestRetryAfterClampedAndNamed: a rate-limited 403 whose Retry-After asks
// for 99999999999 seconds fails at once naming the rate limit and what GitHub asked, not the
// permissions; one with Retry-After: -5 is retried with backoff, and when it never ends the
// error names the rate limit too.
func TestRetryAfterClampedAndNamed(t *testing.T) {
	for _, tc := range []struct {
		retryAfter   string
		wantAttempts int32
	}{
		{"99999999999", 1},
		{"-5", 0}, // as many as the backoff fits in the budget
	} {
		t.Run(tc.retryAfter, func(t *testing.T) {
			c, n := rawGitHub(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", tc.retryAfter)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				fmt.Fprint(w, `{"message": "You have exceeded a secondary rate limit."}`)
			})
			err := c.SetStatus(t.Context(), strings.Repeat("a", 40), Status{Context: "diffusion-check/base", State: "pending"})
			var rl *RateLimitError
			if !errors.As(err, &rl) || errors.Is(err, ErrForbidden) || strings.Contains(err.Error(), "permissions") ||
				!strings.Contains(err.Error(), "rate limited by GitHub (403, Retry-After: "+tc.retryAfter+")") {
				t.Errorf("SetStatus: %v, want a RateLimitError naming Retry-After %s", err, tc.retryAfter)
			}
			if tc.wantAttempts > 0 && n.Load() != tc.wantAttempts {
				t.Errorf("%d requests, want %d", n.Load(), tc.wantAttempts)
			}
			if tc.wantAttempts == 0 && n.Load() < 3 {
				t.Errorf("%d requests: a negative Retry-After was not backed off and retried", n.Load())
			}
		})
	}
}

// githubResponse is a go-github response whose Link names next as the next page.
func githubResponse(next int) *github.Response { return &github.Response{NextPage: next} }
