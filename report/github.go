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
//
// After deleting it looks again, until a look finds no duplicate: a list pages, and when
// another run deletes a comment on an earlier page meanwhile, the later ones move up a page
// and this look misses one. The look after the last delete of all runs sees every comment.
func (p *Publisher) UpsertComment(ctx context.Context, number int, key, body string) (*Posted, error) {
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
			return nil, 0, writeErr(fmt.Sprintf("create comment on %s/%s#%d", p.Owner, p.Repo, number), err)
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
			return nil, 0, writeErr(fmt.Sprintf("edit comment %d on %s/%s#%d", ours[0].GetID(), p.Owner, p.Repo, number), err)
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
			return nil, 0, writeErr(fmt.Sprintf("delete duplicate comment %d on %s/%s#%d", c.GetID(), p.Owner, p.Repo, number), err)
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
