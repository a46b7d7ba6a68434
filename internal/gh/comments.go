package gh

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-github/v66/github"
)

// Identity is a GitHub account, as the author of a comment: its login and its numeric ID
// (which, unlike a login, never changes hands).
type Identity struct {
	Login string
	ID    int64
}

// ActionsBot is the account of the GitHub Actions app: what a workflow's GITHUB_TOKEN writes
// is written by it. https://api.github.com/users/github-actions%5Bbot%5D gives its ID.
var ActionsBot = Identity{Login: "github-actions[bot]", ID: 41898282}

// owns says whether a comment is the comment of marker that this token wrote: its author
// is Self (by ID; by login where GitHub gave no ID) and its first line is marker (a hidden
// HTML comment the caller renders, report.Marker).
// Anything else — a maintainer quoting the marker, a fork author's comment that starts with
// it, a marker inside a code block of another comment — is someone else's.
func (g *Client) owns(c *github.IssueComment, marker string) bool {
	if g.Self == nil {
		return false
	}
	u := c.GetUser()
	switch {
	case u.GetID() != 0 && g.Self.ID != 0:
		if u.GetID() != g.Self.ID {
			return false
		}
	case !strings.EqualFold(u.GetLogin(), g.Self.Login):
		return false
	}
	first, _, _ := strings.Cut(c.GetBody(), "\n")
	return strings.TrimSuffix(first, "\r") == marker
}

// Posted is the comment of a marker on a pull request.
type Posted struct {
	ID   int64
	URL  string
	Body string
}

// FindComment pages through every comment of pull request number and returns the oldest
// that this token wrote with marker (owns), or nil if there is none.
func (g *Client) FindComment(ctx context.Context, number int, marker string) (*Posted, error) {
	ours, err := g.comments(ctx, number, marker)
	if err != nil || len(ours) == 0 {
		return nil, err
	}
	return toComment(ours[0]), nil
}

// comments lists the comments of marker that this token wrote, oldest first; none when Self
// is not known.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#list-issue-comments
//
//meta:operation GET /repos/{owner}/{repo}/issues/{issue_number}/comments
func (g *Client) comments(ctx context.Context, number int, marker string) ([]*github.IssueComment, error) {
	if g.Self == nil {
		return nil, nil
	}
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	var ours []*github.IssueComment
	pages := newPager(fmt.Sprintf("comments of %s/%s#%d", g.Owner, g.Repo, number))
	for {
		page, resp, err := g.API.Issues.ListComments(ctx, g.Owner, g.Repo, number, opts)
		if err != nil {
			return nil, fmt.Errorf("list comments of %s/%s#%d: %w", g.Owner, g.Repo, number, err)
		}
		for _, c := range page {
			if g.owns(c, marker) {
				ours = append(ours, c)
			}
		}
		next, err := pages.next(opts.Page, resp)
		if err != nil {
			return nil, err
		}
		if next == 0 {
			break
		}
		opts.Page = next
	}
	slices.SortStableFunc(ours, func(a, b *github.IssueComment) int {
		return cmp.Or(a.GetCreatedAt().Compare(b.GetCreatedAt().Time), cmp.Compare(a.GetID(), b.GetID()))
	})
	return ours, nil
}

func toComment(c *github.IssueComment) *Posted {
	return &Posted{ID: c.GetID(), URL: c.GetHTMLURL(), Body: c.GetBody()}
}

// UpsertComment makes body (whose first line must be marker) the one comment of
// marker on pull request number: it edits the oldest comment of marker this token wrote (owns), or
// creates one, then deletes its other comments of marker — two runs that raced may both have
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
func (g *Client) UpsertComment(ctx context.Context, number int, marker, body string) (*Posted, error) {
	if err := startsWith(body, marker); err != nil {
		return nil, err
	}
	for round := 1; ; round++ {
		kept, dups, err := g.upsertOnce(ctx, number, marker, body)
		if err != nil || dups == 0 {
			return kept, err
		}
		if round == maxUpsertRounds {
			return nil, fmt.Errorf("comment %s on %s/%s#%d: duplicates still found after %d rounds of deleting them", marker, g.Owner, g.Repo, number, round)
		}
	}
}

// startsWith refuses a comment body whose first line is not its marker: the bot would not
// know it for its own afterwards (owns).
func startsWith(body, marker string) error {
	if first, _, _ := strings.Cut(body, "\n"); first != marker {
		return errors.New("comment: its first line is not the marker " + marker)
	}
	return nil
}

// commentPerm is the permission a comment write needs.
const commentPerm = "pull-requests: write"

// maxUpsertRounds bounds UpsertComment's looks: each round deletes every duplicate it sees,
// so only runs that keep racing need more than two.
const maxUpsertRounds = 10

// upsertOnce is one round of UpsertComment; dups is how many duplicates it deleted (or found
// deleted already).
func (g *Client) upsertOnce(ctx context.Context, number int, marker, body string) (_ *Posted, dups int, _ error) {
	ours, err := g.comments(ctx, number, marker)
	if err != nil {
		return nil, 0, err
	}
	var kept *github.IssueComment
	if len(ours) == 0 {
		c, _, err := g.API.Issues.CreateComment(ctx, g.Owner, g.Repo, number, &github.IssueComment{Body: &body})
		if err != nil {
			return nil, 0, g.writeErr(fmt.Sprintf("create comment on %s/%s#%d", g.Owner, g.Repo, number), commentPerm, err)
		}
		if g.Self == nil {
			return toComment(c), 0, nil
		}
		// Another run may have created one at the same time: look again.
		if ours, err = g.comments(ctx, number, marker); err != nil {
			return nil, 0, err
		}
		if len(ours) == 0 || ours[0].GetID() == c.GetID() {
			kept = c
		}
	}
	if kept == nil {
		c, _, err := g.API.Issues.EditComment(ctx, g.Owner, g.Repo, ours[0].GetID(), &github.IssueComment{Body: &body})
		if notFound(err) {
			// Deleted by a run that saw an older one: look again. Still listed: the token may
			// not write it, as writeErr says.
			id := ours[0].GetID()
			again, lerr := g.comments(ctx, number, marker)
			if lerr == nil && !slices.ContainsFunc(again, func(c *github.IssueComment) bool { return c.GetID() == id }) {
				return nil, 1, nil
			}
		}
		if err != nil {
			return nil, 0, g.writeErr(fmt.Sprintf("edit comment %d on %s/%s#%d", ours[0].GetID(), g.Owner, g.Repo, number), commentPerm, err)
		}
		kept = c
	}
	for _, c := range ours {
		if c.GetID() == kept.GetID() {
			continue
		}
		dups++
		// Not found: the other run deleted it first.
		if _, err := g.API.Issues.DeleteComment(ctx, g.Owner, g.Repo, c.GetID()); err != nil && !notFound(err) {
			return nil, 0, g.writeErr(fmt.Sprintf("delete duplicate comment %d on %s/%s#%d", c.GetID(), g.Owner, g.Repo, number), commentPerm, err)
		}
	}
	return toComment(kept), dups, nil
}

// RecreateComment posts body (whose first line must be marker) as a new comment on pull
// request number, then deletes this token's other comments of marker, so that the report sits
// at the end of the conversation, as marocchino/sticky-pull-request-comment's recreate does.
// It creates before it deletes: a failed delete leaves a duplicate, never no comment. Runs
// that race each keep the newest comment of marker (the highest ID), so they converge on one.
// No comment of another account is ever deleted; without Self it only creates.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#create-an-issue-comment
//
//meta:operation POST /repos/{owner}/{repo}/issues/{issue_number}/comments
//meta:operation DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}
func (g *Client) RecreateComment(ctx context.Context, number int, marker, body string) (*Posted, error) {
	if err := startsWith(body, marker); err != nil {
		return nil, err
	}
	c, _, err := g.API.Issues.CreateComment(ctx, g.Owner, g.Repo, number, &github.IssueComment{Body: &body})
	if err != nil {
		return nil, g.writeErr(fmt.Sprintf("create comment on %s/%s#%d", g.Owner, g.Repo, number), commentPerm, err)
	}
	kept := c
	ours, err := g.comments(ctx, number, marker)
	if err != nil {
		return nil, err
	}
	for _, o := range ours {
		if o.GetID() > kept.GetID() {
			kept = o // a racing run's, newer than this one's
		}
	}
	for _, o := range ours {
		if o.GetID() == kept.GetID() {
			continue
		}
		if _, err := g.API.Issues.DeleteComment(ctx, g.Owner, g.Repo, o.GetID()); err != nil && !notFound(err) {
			return nil, g.writeErr(fmt.Sprintf("delete the earlier comment %d on %s/%s#%d", o.GetID(), g.Owner, g.Repo, number), commentPerm, err)
		}
	}
	return toComment(kept), nil
}
