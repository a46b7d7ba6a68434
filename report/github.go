package report

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/go-github/v66/github"
	"golang.org/x/oauth2"

	"github.com/diffusion-check/diffusion-check/checks"
)

// ErrReadOnly marks a write that GitHub refused for lack of permission (403 or 404): the
// token of a pull request from a fork can read but not write.
var ErrReadOnly = errors.New("the token cannot write to this repository")

// Publisher posts the report to a pull request: one comment per key, edited in place, and a
// commit status per lane. Client is a real *github.Client; its HTTP transport should retry
// (RetryTransport), since Publisher itself does not.
type Publisher struct {
	Client      *github.Client
	Owner, Repo string
}

// Posted is the comment of a key on a pull request.
type Posted struct {
	ID   int64
	URL  string
	Body string
}

// FindComment pages through every comment of pull request number and returns the oldest
// that carries the marker of key, or nil if there is none.
func (p *Publisher) FindComment(ctx context.Context, number int, key string) (*Posted, error) {
	ours, err := p.comments(ctx, number, key)
	if err != nil || len(ours) == 0 {
		return nil, err
	}
	return toComment(ours[0]), nil
}

// comments lists the comments of key, oldest first.
func (p *Publisher) comments(ctx context.Context, number int, key string) ([]*github.IssueComment, error) {
	marker := Marker(key)
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	var ours []*github.IssueComment
	for {
		page, resp, err := p.Client.Issues.ListComments(ctx, p.Owner, p.Repo, number, opts)
		if err != nil {
			return nil, fmt.Errorf("list comments of %s/%s#%d: %w", p.Owner, p.Repo, number, err)
		}
		for _, c := range page {
			if strings.Contains(c.GetBody(), marker) {
				ours = append(ours, c)
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	slices.SortStableFunc(ours, func(a, b *github.IssueComment) int {
		return cmp.Or(a.GetCreatedAt().Compare(b.GetCreatedAt().Time), cmp.Compare(a.GetID(), b.GetID()))
	})
	return ours, nil
}

func toComment(c *github.IssueComment) *Posted {
	return &Posted{ID: c.GetID(), URL: c.GetHTMLURL(), Body: c.GetBody()}
}

// UpsertComment makes body (which must carry the marker of key) the one comment of key on
// pull request number: it edits the oldest comment of key, or creates one, then deletes any
// others — two runs that raced may both have created one. When the race left another
// comment as the oldest, that one gets body too. It returns the comment kept.
func (p *Publisher) UpsertComment(ctx context.Context, number int, key, body string) (*Posted, error) {
	ours, err := p.comments(ctx, number, key)
	if err != nil {
		return nil, err
	}
	var kept *github.IssueComment
	if len(ours) == 0 {
		c, _, err := p.Client.Issues.CreateComment(ctx, p.Owner, p.Repo, number, &github.IssueComment{Body: &body})
		if err != nil {
			return nil, writeErr(fmt.Sprintf("create comment on %s/%s#%d", p.Owner, p.Repo, number), err)
		}
		// Another run may have created one at the same time: look again.
		if ours, err = p.comments(ctx, number, key); err != nil {
			return nil, err
		}
		if len(ours) == 0 || ours[0].GetID() == c.GetID() {
			kept = c
		}
	}
	if kept == nil {
		c, _, err := p.Client.Issues.EditComment(ctx, p.Owner, p.Repo, ours[0].GetID(), &github.IssueComment{Body: &body})
		if err != nil {
			return nil, writeErr(fmt.Sprintf("edit comment %d on %s/%s#%d", ours[0].GetID(), p.Owner, p.Repo, number), err)
		}
		kept = c
	}
	for _, c := range ours {
		if c.GetID() == kept.GetID() {
			continue
		}
		if _, err := p.Client.Issues.DeleteComment(ctx, p.Owner, p.Repo, c.GetID()); err != nil {
			var gerr *github.ErrorResponse
			if errors.As(err, &gerr) && gerr.Response != nil && gerr.Response.StatusCode == http.StatusNotFound {
				continue // the other run deleted it first
			}
			return nil, writeErr(fmt.Sprintf("delete duplicate comment %d on %s/%s#%d", c.GetID(), p.Owner, p.Repo, number), err)
		}
	}
	return toComment(kept), nil
}

// StatusContext is the commit status context of a lane.
func StatusContext(lane string) string { return "diffusion-check/" + lane }

// MaxDescription is GitHub's limit on a commit status description, in characters.
const MaxDescription = 140

// Status is a commit status to set on a pull request's head commit.
type Status struct {
	Lane        string
	State       string // pending, success, failure or error
	Description string
	TargetURL   string
}

// LaneStatus is the commit status a lane's result calls for: success for pass and known,
// failure for fail, error otherwise, with a description that names what failed first.
func LaneStatus(l checks.Result, targetURL string) Status {
	n := count([]checks.Result{l})
	st := Status{Lane: l.Lane, TargetURL: targetURL}
	switch l.Status {
	case checks.Pass:
		st.State, st.Description = "success", fmt.Sprintf("all %s passed", plural(n.requests, "request"))
	case checks.Known:
		st.State, st.Description = "success", fmt.Sprintf("%d of %s passed, %d known failures", n.passed, plural(n.requests, "request"), n.known)
	case checks.Fail:
		st.State = "failure"
		st.Description = fmt.Sprintf("%d of %s failed", n.failed, plural(n.requests, "request"))
		if keys := failingKeys([]checks.Result{l}); len(keys) > 0 {
			st.Description += ": " + strings.ReplaceAll(strings.Join(keys, ", "), l.Lane+"/", "")
		}
	default:
		st.State = "error"
		st.Description = fmt.Sprintf("could not check everything (%s)", cmp.Or(string(l.Status), "no status"))
		if len(l.Errors) > 0 {
			st.Description += ": " + firstLine(l.Errors[0])
		}
	}
	st.Description = clip(st.Description, MaxDescription)
	return st
}

// PendingStatus is the status of a lane whose run has started.
func PendingStatus(lane, targetURL string) Status {
	return Status{Lane: lane, State: "pending", Description: "running", TargetURL: targetURL}
}

// clip shortens s to at most n characters, ending with "…" when it had to cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// SetStatus sets st on commit sha (the pull request's head, never the merge commit).
func (p *Publisher) SetStatus(ctx context.Context, sha string, st Status) error {
	desc := clip(st.Description, MaxDescription)
	rs := &github.RepoStatus{State: &st.State, Description: &desc, Context: github.String(StatusContext(st.Lane))}
	if st.TargetURL != "" {
		rs.TargetURL = &st.TargetURL
	}
	if _, _, err := p.Client.Repositories.CreateStatus(ctx, p.Owner, p.Repo, sha, rs); err != nil {
		return writeErr(fmt.Sprintf("set status %s on %s/%s@%s", StatusContext(st.Lane), p.Owner, p.Repo, shortSHA(sha)), err)
	}
	return nil
}

// writeErr wraps a failed write, marking refusals for lack of permission with ErrReadOnly.
func writeErr(what string, err error) error {
	var gerr *github.ErrorResponse
	if errors.As(err, &gerr) && gerr.Response != nil {
		switch gerr.Response.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			return fmt.Errorf("%s: %w (%w)", what, ErrReadOnly, err)
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Event is what publishing needs from a workflow's event payload.
type Event struct {
	// Number is the pull request number; 0 when the event is not about one (no comment).
	Number int
	// HeadSHA is the commit the statuses go on: the pull request's head, not the merge commit.
	HeadSHA string
	// Repo is owner/name of the repository the event belongs to ("" if the payload has none).
	Repo string
}

// ParseEvent reads a GitHub event payload (GITHUB_EVENT_PATH, or a file uploaded by the
// pull_request workflow for the workflow_run pattern): pull_request and
// pull_request_target events, workflow_run events of a pull request, and push events
// (statuses only).
func ParseEvent(data []byte) (Event, error) {
	var p struct {
		Number      int `json:"number"`
		PullRequest *struct {
			Number int `json:"number"`
			Head   struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
		WorkflowRun *struct {
			HeadSHA      string `json:"head_sha"`
			PullRequests []struct {
				Number int `json:"number"`
				Head   struct {
					SHA string `json:"sha"`
				} `json:"head"`
			} `json:"pull_requests"`
		} `json:"workflow_run"`
		After      string `json:"after"`
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return Event{}, fmt.Errorf("event payload: %w", err)
	}
	ev := Event{Repo: p.Repository.FullName}
	switch {
	case p.PullRequest != nil:
		ev.Number, ev.HeadSHA = cmp.Or(p.PullRequest.Number, p.Number), p.PullRequest.Head.SHA
	case p.WorkflowRun != nil:
		ev.HeadSHA = p.WorkflowRun.HeadSHA
		if len(p.WorkflowRun.PullRequests) > 0 {
			pr := p.WorkflowRun.PullRequests[0]
			ev.Number, ev.HeadSHA = pr.Number, cmp.Or(pr.Head.SHA, ev.HeadSHA)
		}
	default:
		ev.HeadSHA = p.After
	}
	if ev.HeadSHA == "" {
		return Event{}, errors.New("event payload: no head commit (want a pull_request, workflow_run or push event)")
	}
	if !isSHA(ev.HeadSHA) {
		return Event{}, fmt.Errorf("event payload: head commit %q is not a commit SHA", ev.HeadSHA)
	}
	if ev.Number < 0 {
		return Event{}, fmt.Errorf("event payload: pull request number %d", ev.Number)
	}
	return ev, nil
}

func isSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// RetryTransport retries GitHub API requests that failed for reasons that pass: 5xx, 429,
// and 403s that are rate limits (primary: X-RateLimit-Remaining 0; secondary: Retry-After or
// a "secondary rate limit" message). It waits as GitHub asks (Retry-After,
// X-RateLimit-Reset), else with exponential backoff and full jitter, and gives up — returning
// the last response as it came — once the next wait would pass MaxElapsed in total. Transport
// errors (connection reset, a per-attempt timeout) are retried the same way.
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
	OnRetry func(req *http.Request, status int, err error, wait time.Duration)
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
		sleep = sleepCtx
	}
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		r, err := rewind(req)
		if err != nil {
			return nil, err
		}
		resp, cancel, err := t.once(base, r)
		wait, retry := time.Duration(0), false
		status := 0
		if err != nil {
			if req.Context().Err() != nil {
				return nil, err
			}
			retry = true
		} else {
			status = resp.StatusCode
			wait, retry = retryAfter(resp, now)
		}
		if !retry {
			return withCancel(resp, cancel), err
		}
		if wait <= 0 {
			// Full jitter: anywhere in [0, backoff), at least a tenth of it.
			backoff := min(delay<<min(attempt, 5), 30*time.Second)
			wait = max(backoff/10, time.Duration(jitter()*float64(backoff)))
		}
		if waited+wait > maxElapsed {
			if err != nil {
				return nil, fmt.Errorf("%s %s: gave up after %d attempts: %w", req.Method, req.URL.Path, attempt+1, err)
			}
			return withCancel(resp, cancel), nil
		}
		if resp != nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
		}
		if cancel != nil {
			cancel()
		}
		if t.OnRetry != nil {
			t.OnRetry(req, status, err, wait)
		}
		if err := sleep(req.Context(), wait); err != nil {
			return nil, err
		}
		waited += wait
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

// retryAfter says whether a response is worth retrying and how long GitHub asked to wait
// (0: not said, back off).
func retryAfter(resp *http.Response, now func() time.Time) (time.Duration, bool) {
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
		return 0, false
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			return time.Duration(n) * time.Second, true
		}
		if t, err := http.ParseTime(s); err == nil {
			return max(t.Sub(now()), 0), true
		}
	}
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		if n, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			// A second more: the reset is rounded down, and clocks differ.
			return max(time.Unix(n, 0).Sub(now()), 0) + time.Second, true
		}
	}
	return 0, true
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// NewClient returns a go-github client for apiURL (GITHUB_API_URL: https://api.github.com,
// or a GHES server's https://HOST/api/v3) that authenticates with token through oauth2 and
// sends every request through transport (nil: a RetryTransport with its defaults).
func NewClient(apiURL, token string, transport http.RoundTripper) (*github.Client, error) {
	if transport == nil {
		transport = &RetryTransport{}
	}
	hc := &http.Client{Transport: &oauth2.Transport{Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}), Base: transport}}
	c := github.NewClient(hc)
	apiURL = strings.TrimRight(apiURL, "/")
	if apiURL == "" || apiURL == "https://api.github.com" {
		return c, nil
	}
	c, err := c.WithEnterpriseURLs(apiURL+"/", apiURL+"/")
	if err != nil {
		return nil, fmt.Errorf("GitHub API URL %q: %w", apiURL, err)
	}
	return c, nil
}
