package report

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/go-github/v66/github"
	"golang.org/x/oauth2"

	"github.com/diffusion-check/diffusion-check/checks"
)

// ErrReadOnly marks a write GitHub refused with 403 for a pull request from a fork: its
// workflow's token can read but not write. Any other refusal (401, a 403 in this
// repository's own pull request, 404) is an error of its own: a token or a permissions:
// block that needs fixing.
var ErrReadOnly = errors.New("the token is read-only (a pull request from a fork)")

// Publisher posts the report to a pull request: one comment per key, edited in place, and a
// commit status per lane. Client is a real *github.Client; its HTTP transport should retry
// (RetryTransport), since Publisher itself does not.
type Publisher struct {
	Client      *github.Client
	Owner, Repo string
	// Self is the account the token acts as (Publisher.Identity); only comments it wrote are
	// ever edited or deleted. nil: not known, and then a comment is only ever created.
	Self *Identity
	// Fork says the event is a pull request from a fork, whose token is read-only: a 403 then
	// means ErrReadOnly.
	Fork bool
}

// Identity is a GitHub account, as the author of a comment: its login and its numeric ID
// (which, unlike a login, never changes hands).
type Identity struct {
	Login string
	ID    int64
}

// ActionsBot is the account of the GitHub Actions app: what a workflow's GITHUB_TOKEN writes
// is written by it. https://api.github.com/users/github-actions%5Bbot%5D gives its ID.
var ActionsBot = Identity{Login: "github-actions[bot]", ID: 41898282}

// Identity finds the account the token acts as, and says how it knows.
//
// The rule: GET /user answers for a user's token (a personal access token, classic or
// fine-grained): that user. An installation token, which the workflow's GITHUB_TOKEN is, is
// refused by GET /user with 403 (not a rate limit): then the account is ActionsBot. A token
// of another GitHub App is taken for GITHUB_TOKEN too, so its own comments are never found
// again and each run creates one (never an edit of another account's). Anything else (no
// answer, 401, 5xx) is an error: the caller then publishes without an identity, creating
// a comment and never editing or deleting one.
//
// GitHub API docs: https://docs.github.com/rest/users/users#get-the-authenticated-user
//
//meta:operation GET /user
func (p *Publisher) Identity(ctx context.Context) (Identity, string, error) {
	u, _, err := p.Client.Users.Get(ctx, "")
	if err == nil {
		if u.GetLogin() == "" || u.GetID() == 0 {
			return Identity{}, "", errors.New("find the token's account: GET /user answered no login or id")
		}
		return Identity{Login: u.GetLogin(), ID: u.GetID()}, "GET /user: the token acts as " + u.GetLogin(), nil
	}
	var gerr *github.ErrorResponse
	var rl *github.RateLimitError
	var abuse *github.AbuseRateLimitError
	if errors.As(err, &gerr) && !errors.As(err, &rl) && !errors.As(err, &abuse) &&
		gerr.Response != nil && gerr.Response.StatusCode == http.StatusForbidden {
		return ActionsBot, "GET /user refused an installation token (403): the workflow's GITHUB_TOKEN, which writes as github-actions[bot]", nil
	}
	return Identity{}, "", fmt.Errorf("find the token's account (GET /user): %w", err)
}

// owns says whether a comment is the comment of key that this token wrote: its author is
// Self (by ID; by login where GitHub gave no ID) and its first line is the marker of key.
// Anything else — a maintainer quoting the marker, a fork author's comment that starts with
// it, a marker inside a code block of another comment — is someone else's.
func (p *Publisher) owns(c *github.IssueComment, key string) bool {
	if p.Self == nil {
		return false
	}
	u := c.GetUser()
	switch {
	case u.GetID() != 0 && p.Self.ID != 0:
		if u.GetID() != p.Self.ID {
			return false
		}
	case !strings.EqualFold(u.GetLogin(), p.Self.Login):
		return false
	}
	first, _, _ := strings.Cut(c.GetBody(), "\n")
	return strings.TrimSuffix(first, "\r") == Marker(key)
}

// Posted is the comment of a key on a pull request.
type Posted struct {
	ID   int64
	URL  string
	Body string
}

// FindComment pages through every comment of pull request number and returns the oldest
// that this token wrote for key (owns), or nil if there is none.
func (p *Publisher) FindComment(ctx context.Context, number int, key string) (*Posted, error) {
	ours, err := p.comments(ctx, number, key)
	if err != nil || len(ours) == 0 {
		return nil, err
	}
	return toComment(ours[0]), nil
}

// comments lists the comments of key that this token wrote, oldest first; none when Self
// is not known.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#list-issue-comments
//
//meta:operation GET /repos/{owner}/{repo}/issues/{issue_number}/comments
func (p *Publisher) comments(ctx context.Context, number int, key string) ([]*github.IssueComment, error) {
	if p.Self == nil {
		return nil, nil
	}
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	var ours []*github.IssueComment
	for {
		page, resp, err := p.Client.Issues.ListComments(ctx, p.Owner, p.Repo, number, opts)
		if err != nil {
			return nil, fmt.Errorf("list comments of %s/%s#%d: %w", p.Owner, p.Repo, number, err)
		}
		for _, c := range page {
			if p.owns(c, key) {
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

// UpsertComment makes body (whose first line must be the marker of key) the one comment of
// key on pull request number: it edits the oldest comment of key this token wrote (owns), or
// creates one, then deletes its other comments of key — two runs that raced may both have
// created one. When the race left another comment as the oldest, that one gets body too. It
// returns the comment kept. Without Self it only creates. No comment of another account is
// ever edited or deleted.
//
// After deleting it looks again, until a look finds no duplicate: a list pages, and when
// another run deletes a comment on an earlier page meanwhile, the later ones move up a page
// and this look misses one. The look after the last delete of all runs sees every comment.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#create-an-issue-comment
//
//meta:operation POST /repos/{owner}/{repo}/issues/{issue_number}/comments
//meta:operation PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}
//meta:operation DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}
func (p *Publisher) UpsertComment(ctx context.Context, number int, key, body string) (*Posted, error) {
	if first, _, _ := strings.Cut(body, "\n"); first != Marker(key) {
		return nil, fmt.Errorf("comment of key %q: its first line is not the marker %s", key, Marker(key))
	}
	for round := 1; ; round++ {
		kept, dups, err := p.upsertOnce(ctx, number, key, body)
		if err != nil || dups == 0 {
			return kept, err
		}
		if round == maxUpsertRounds {
			return nil, fmt.Errorf("comment %s on %s/%s#%d: duplicates still found after %d rounds of deleting them", key, p.Owner, p.Repo, number, round)
		}
	}
}

// maxUpsertRounds bounds UpsertComment's looks: each round deletes every duplicate it sees,
// so only runs that keep racing need more than two.
const maxUpsertRounds = 10

// upsertOnce is one round of UpsertComment; dups is how many duplicates it deleted (or found
// deleted already).
func (p *Publisher) upsertOnce(ctx context.Context, number int, key, body string) (_ *Posted, dups int, _ error) {
	ours, err := p.comments(ctx, number, key)
	if err != nil {
		return nil, 0, err
	}
	var kept *github.IssueComment
	if len(ours) == 0 {
		c, _, err := p.Client.Issues.CreateComment(ctx, p.Owner, p.Repo, number, &github.IssueComment{Body: &body})
		if err != nil {
			return nil, 0, p.writeErr(fmt.Sprintf("create comment on %s/%s#%d", p.Owner, p.Repo, number), err)
		}
		if p.Self == nil {
			return toComment(c), 0, nil
		}
		// Another run may have created one at the same time: look again.
		if ours, err = p.comments(ctx, number, key); err != nil {
			return nil, 0, err
		}
		if len(ours) == 0 || ours[0].GetID() == c.GetID() {
			kept = c
		}
	}
	if kept == nil {
		c, _, err := p.Client.Issues.EditComment(ctx, p.Owner, p.Repo, ours[0].GetID(), &github.IssueComment{Body: &body})
		if notFound(err) {
			// Deleted by a run that saw an older one: look again. Still listed: the token may
			// not write it, as writeErr says.
			id := ours[0].GetID()
			again, lerr := p.comments(ctx, number, key)
			if lerr == nil && !slices.ContainsFunc(again, func(c *github.IssueComment) bool { return c.GetID() == id }) {
				return nil, 1, nil
			}
		}
		if err != nil {
			return nil, 0, p.writeErr(fmt.Sprintf("edit comment %d on %s/%s#%d", ours[0].GetID(), p.Owner, p.Repo, number), err)
		}
		kept = c
	}
	for _, c := range ours {
		if c.GetID() == kept.GetID() {
			continue
		}
		dups++
		// Not found: the other run deleted it first.
		if _, err := p.Client.Issues.DeleteComment(ctx, p.Owner, p.Repo, c.GetID()); err != nil && !notFound(err) {
			return nil, 0, p.writeErr(fmt.Sprintf("delete duplicate comment %d on %s/%s#%d", c.GetID(), p.Owner, p.Repo, number), err)
		}
	}
	return toComment(kept), dups, nil
}

// notFound reports whether GitHub answered 404: the comment is gone.
func notFound(err error) bool {
	var gerr *github.ErrorResponse
	return errors.As(err, &gerr) && gerr.Response != nil && gerr.Response.StatusCode == http.StatusNotFound
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

// LaneStatus is the commit status a lane's result calls for: success for pass, known and
// flaky (with a note naming the flaky check: "1 flaky: perf.e2e not reproduced in 0/2"),
// failure for fail, error otherwise, with a description that names what failed first.
func LaneStatus(l checks.Result, targetURL string) Status {
	n := count([]checks.Result{l})
	st := Status{Lane: l.Lane, TargetURL: targetURL}
	switch l.Status {
	case checks.Pass:
		st.State, st.Description = "success", fmt.Sprintf("all %s passed", plural(n.requests, "request"))
	case checks.Known:
		st.State, st.Description = "success", fmt.Sprintf("%d of %s passed, %d known failures", n.passed, plural(n.requests, "request"), n.known)
	case checks.Flaky:
		st.State, st.Description = "success", fmt.Sprintf("passed; %s", checks.FlakyNote(l))
		if n.known > 0 {
			st.Description += fmt.Sprintf("; %d known failures", n.known)
		}
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
	if ran, of, sel, _ := selected([]checks.Result{l}); sel != nil && sel.All == "" && st.State == "success" {
		if ran == 0 {
			st.Description = fmt.Sprintf("nothing to check: none of the %s is selected by the changed paths", plural(of, "case"))
		} else {
			st.Description += fmt.Sprintf(" (%d of %s selected by the changed paths)", ran, plural(of, "case"))
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
//
// GitHub API docs: https://docs.github.com/rest/commits/statuses#create-a-commit-status
//
//meta:operation POST /repos/{owner}/{repo}/statuses/{sha}
func (p *Publisher) SetStatus(ctx context.Context, sha string, st Status) error {
	desc := clip(st.Description, MaxDescription)
	rs := &github.RepoStatus{State: &st.State, Description: &desc, Context: github.String(StatusContext(st.Lane))}
	if st.TargetURL != "" {
		rs.TargetURL = &st.TargetURL
	}
	if _, _, err := p.Client.Repositories.CreateStatus(ctx, p.Owner, p.Repo, sha, rs); err != nil {
		return p.writeErr(fmt.Sprintf("set status %s on %s/%s@%s", StatusContext(st.Lane), p.Owner, p.Repo, shortSHA(sha)), err)
	}
	return nil
}

// writeErr wraps a failed write and says what a refusal means: a 403 for a fork's pull
// request is ErrReadOnly (expected, not a failure); 401, another 403 and 404 name what to fix.
func (p *Publisher) writeErr(what string, err error) error {
	var gerr *github.ErrorResponse
	if !errors.As(err, &gerr) || gerr.Response == nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	switch gerr.Response.StatusCode {
	case http.StatusUnauthorized:
		return fmt.Errorf("%s: GitHub refused the token (401): it is invalid or expired: %w", what, err)
	case http.StatusForbidden:
		if p.Fork {
			// One %w: a fork's refusal is ErrReadOnly, and nothing else to tell apart (wrapping
			// GitHub's error too would let its type decide what the caller makes of it).
			return fmt.Errorf("%s: %w: %v", what, ErrReadOnly, err) //nolint:errorlint // see above
		}
		return fmt.Errorf("%s: the token may not write this (403): give the job \"permissions: statuses: write\" for statuses and \"pull-requests: write\" for the comment: %w", what, err)
	case http.StatusNotFound:
		return fmt.Errorf("%s: not found (404): the repository %s/%s, the commit or the comment does not exist, or the token cannot see it: %w", what, p.Owner, p.Repo, err)
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
	// HeadRepo is owner/name of the repository the tested commit comes from: a fork's for a
	// pull request from a fork ("" if the payload does not say).
	HeadRepo string
	// WorkflowRun is set for a workflow_run event: the commit and pull request are those of
	// the run that triggered it, and a fork's pull request is not listed in the payload.
	WorkflowRun bool
}

// FromFork reports whether the event's commit comes from another repository than the one
// the workflow runs in: code that the repository's maintainers did not write.
func (ev Event) FromFork() bool { return ev.HeadRepo != "" && ev.Repo != "" && ev.HeadRepo != ev.Repo }

// ParseEvent reads a GitHub event payload (GITHUB_EVENT_PATH, or a file uploaded by the
// pull_request workflow for the workflow_run pattern): pull_request and
// pull_request_target events, workflow_run events, and push events (statuses only). For a
// workflow_run event the commit is the run's head_sha, and the pull request the one of
// pull_requests[] with that head (none for a fork's pull request: see Publisher.Target).
func ParseEvent(data []byte) (Event, error) {
	type repo struct {
		FullName string `json:"full_name"`
	}
	var p struct {
		Number      int `json:"number"`
		PullRequest *struct {
			Number int `json:"number"`
			Head   struct {
				SHA  string `json:"sha"`
				Repo *repo  `json:"repo"`
			} `json:"head"`
		} `json:"pull_request"`
		WorkflowRun *struct {
			HeadSHA        string `json:"head_sha"`
			HeadRepository *repo  `json:"head_repository"`
			PullRequests   []struct {
				Number int `json:"number"`
				Head   struct {
					SHA string `json:"sha"`
				} `json:"head"`
			} `json:"pull_requests"`
		} `json:"workflow_run"`
		After      string `json:"after"`
		Repository repo   `json:"repository"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return Event{}, fmt.Errorf("event payload: %w", err)
	}
	ev := Event{Repo: p.Repository.FullName}
	switch {
	case p.PullRequest != nil:
		ev.Number, ev.HeadSHA = cmp.Or(p.PullRequest.Number, p.Number), p.PullRequest.Head.SHA
		if r := p.PullRequest.Head.Repo; r != nil {
			ev.HeadRepo = r.FullName
		}
	case p.WorkflowRun != nil:
		ev.WorkflowRun = true
		ev.HeadSHA = p.WorkflowRun.HeadSHA
		if r := p.WorkflowRun.HeadRepository; r != nil {
			ev.HeadRepo = r.FullName
		}
		// The statuses go on the commit the run tested; a pull request listed with another
		// head has moved on since, and is not the one this run is about.
		for _, pr := range p.WorkflowRun.PullRequests {
			if pr.Head.SHA == "" || pr.Head.SHA == ev.HeadSHA {
				ev.Number = pr.Number
				break
			}
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
