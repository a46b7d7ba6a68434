package gh

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"
	"golang.org/x/oauth2"
)

// Client is the one GitHub API client of diffusion-check: a real *github.Client on a
// RetryTransport, bound to one repository, with what it knows about its token.
type Client struct {
	API         *github.Client
	Owner, Repo string
	// Self is the account the token acts as (Client.Identity); only comments it wrote are
	// ever edited or deleted. nil: not known, and then a comment is only ever created.
	Self *Identity
	// Fork says the event is a pull request from a fork, whose token is read-only: a 403 then
	// means ErrReadOnly (Env.ReadOnlyFork decides it).
	Fork bool
}

// New returns the client of env's repository: env.Token through oauth2, env.APIURL (GHES),
// and every request through rt (nil: a RetryTransport with its defaults).
func New(env Env, rt *RetryTransport) (*Client, error) {
	owner, repo, err := env.OwnerRepo()
	if err != nil {
		return nil, err
	}
	if rt == nil {
		rt = &RetryTransport{}
	}
	hc := &http.Client{Transport: &oauth2.Transport{Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: env.Token}), Base: rt}}
	c := github.NewClient(hc)
	if api := strings.TrimRight(env.APIURL, "/"); api != "" && api != "https://api.github.com" {
		if c, err = c.WithEnterpriseURLs(api+"/", api+"/"); err != nil {
			return nil, fmt.Errorf("GitHub API URL %q: %w", api, err)
		}
	}
	return &Client{API: c, Owner: owner, Repo: repo}, nil
}

// LogRetries is a RetryTransport.OnRetry that tells each retry on w, and why it waits that
// long: "GitHub GET /repos/o/r/pulls/7/files: 503 Service Unavailable; retrying in 1s (backing
// off)".
func LogRetries(w io.Writer) func(Retry) {
	return func(r Retry) {
		what := fmt.Sprintf("%d %s", r.Status, http.StatusText(r.Status))
		if r.Err != nil {
			what = r.Err.Error()
		}
		why := ""
		if r.Why != "" {
			why = " (" + r.Why + ")"
		}
		fmt.Fprintf(w, "GitHub %s %s: %s; retrying in %s%s\n", r.Req.Method, r.Req.URL.Path, what, r.Wait.Round(time.Millisecond), why)
	}
}

// ErrReadOnly marks a write GitHub refused with 403 for a pull request from a fork: its
// workflow's token can read but not write. Any other refusal (401, a 403 in this
// repository's own pull request, 404) is an error of its own: a token or a permissions:
// block that needs fixing.
var ErrReadOnly = errors.New("the token is read-only (a pull request from a fork)")

// ErrForbidden marks a write GitHub refused with 403 (not a rate limit) outside a fork's
// pull request: the job's permissions: block lacks what the write needs.
var ErrForbidden = errors.New("the token may not write this (403)")

// status is the HTTP status GitHub answered err with; 0 when err is not GitHub's answer.
func status(err error) int {
	var gerr *github.ErrorResponse
	if errors.As(err, &gerr) && gerr.Response != nil {
		return gerr.Response.StatusCode
	}
	return 0
}

// notFound reports whether GitHub answered 404.
func notFound(err error) bool { return status(err) == http.StatusNotFound }

// writeErr wraps a failed write and says what a refusal means: a 403 for a fork's pull
// request is ErrReadOnly (expected, not a failure); any other 403 is ErrForbidden, naming
// the permission (perm, e.g. "statuses: write"); 401 and 404 name what to fix.
func (c *Client) writeErr(what, perm string, err error) error {
	switch status(err) {
	case http.StatusUnauthorized:
		return fmt.Errorf("%s: GitHub refused the token (401): it is invalid or expired: %w", what, err)
	case http.StatusForbidden:
		if c.Fork {
			// One %w: a fork's refusal is ErrReadOnly, and nothing else to tell apart (wrapping
			// GitHub's error too would let its type decide what the caller makes of it).
			return fmt.Errorf("%s: %w: %v", what, ErrReadOnly, err) //nolint:errorlint // see above
		}
		return fmt.Errorf("%s: %w: give the job \"permissions: %s\": %v", what, ErrForbidden, perm, err) //nolint:errorlint // see above
	case http.StatusNotFound:
		return fmt.Errorf("%s: not found (404): the repository %s/%s, the commit or the comment does not exist, or the token cannot see it: %w", what,
			c.Owner, c.Repo, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// shortSHA is the first 12 characters of a commit SHA, for messages.
func shortSHA(s string) string { return s[:min(len(s), 12)] }
