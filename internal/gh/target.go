package gh

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/diffusion-check/diffusion-check/checks"
)

// ErrForgedTarget marks an uploaded event that names another pull request, commit or
// repository than the trusted event of the running workflow: nothing is published.
var ErrForgedTarget = errors.New("the uploaded event does not match the workflow's own event")

// Target is where a report is published, and how that was decided.
type Target struct {
	Event
	// Notes say how the pull request was found, or why there is none (statuses only).
	Notes []string
}

// Target decides where to publish from trusted data only: the running workflow's own event
// (GITHUB_EVENT_PATH; for the workflow_run pattern, the payload GitHub wrote about the run
// that finished) and, for a fork's pull request that a workflow_run payload does not list,
// the pull request GitHub's API gives for the head commit, open, in this repository, with
// that head. An uploaded event (the artifact of the workflow_run pattern, written by code
// the pull request controls) may be given: it adds nothing, and if it names another pull
// request, commit or repository the result is an error wrapping ErrForgedTarget.
func (g *Client) Target(ctx context.Context, trusted Event, uploaded *Event) (Target, error) {
	repo := g.Owner + "/" + g.Repo
	t := Target{Event: trusted}
	if trusted.Repo != "" && trusted.Repo != repo {
		return Target{}, fmt.Errorf("the workflow's event is for repository %s, but GITHUB_REPOSITORY is %s", trusted.Repo, repo)
	}
	if trusted.WorkflowRun && trusted.Number == 0 {
		pr, note, err := g.pullForCommit(ctx, trusted.HeadSHA, trusted.HeadRepo)
		if err != nil {
			return Target{}, err
		}
		t.Number = pr
		t.Notes = append(t.Notes, note)
	}
	if uploaded != nil {
		var bad []string
		if uploaded.HeadSHA != t.HeadSHA {
			bad = append(bad, fmt.Sprintf("commit %s, not %s", uploaded.HeadSHA, t.HeadSHA))
		}
		if uploaded.Number != 0 && uploaded.Number != t.Number {
			bad = append(bad, fmt.Sprintf("pull request #%d, not #%d", uploaded.Number, t.Number))
		}
		if uploaded.Repo != "" && uploaded.Repo != repo {
			bad = append(bad, fmt.Sprintf("repository %s, not %s", uploaded.Repo, repo))
		}
		if len(bad) > 0 {
			return Target{}, fmt.Errorf("%w: it names %s; nothing was published", ErrForgedTarget, strings.Join(bad, ", "))
		}
	}
	return t, nil
}

// pullForCommit finds the open pull request of this repository whose head is sha from
// headRepo (GET /repos/{owner}/{repo}/commits/{sha}/pulls). None, or more than one, is not an
// error: the statuses still go on the commit, and the note says why there is no comment.
func (g *Client) pullForCommit(ctx context.Context, sha, headRepo string) (int, string, error) {
	opts := &github.ListOptions{PerPage: 100}
	var found []int
	pages := newPager(fmt.Sprintf("pull requests of %s in %s/%s", shortSHA(sha), g.Owner, g.Repo))
	for {
		page, resp, err := g.API.PullRequests.ListPullRequestsWithCommit(ctx, g.Owner, g.Repo, sha, opts)
		if err != nil {
			return 0, "", fmt.Errorf("find the pull request of %s in %s/%s: %w", shortSHA(sha), g.Owner, g.Repo, err)
		}
		for _, pr := range page {
			if pr.GetState() != "open" || pr.GetHead().GetSHA() != sha ||
				pr.GetBase().GetRepo().GetFullName() != g.Owner+"/"+g.Repo ||
				(headRepo != "" && pr.GetHead().GetRepo().GetFullName() != headRepo) {
				continue
			}
			found = append(found, pr.GetNumber())
		}
		next, err := pages.next(opts.Page, resp)
		if err != nil {
			return 0, "", err
		}
		if next == 0 {
			break
		}
		opts.Page = next
	}
	switch len(found) {
	case 0:
		return 0, fmt.Sprintf("no open pull request of %s/%s has head %s: statuses only, no comment", g.Owner, g.Repo, shortSHA(sha)), nil
	case 1:
		return found[0], fmt.Sprintf("pull request #%d found by its head commit %s", found[0], shortSHA(sha)), nil
	}
	return 0, fmt.Sprintf("%d open pull requests have head %s: statuses only, no comment", len(found), shortSHA(sha)), nil
}

// ErrOtherCommit marks results that did not test the commit being published: their verdict
// is not this commit's, and nothing is published.
var ErrOtherCommit = errors.New("the results are not of the commit being published")

// CheckCommit refuses lanes whose results tested another commit than head (the pull
// request's head from the trusted event), or do not say which commit they tested: the
// runner records it (results.json "commit"), and an uploaded results file can name any.
func CheckCommit(lanes []checks.Result, head string) error {
	var bad []string
	for _, l := range lanes {
		switch {
		case l.Commit == "":
			bad = append(bad, fmt.Sprintf("lane %s records no commit", l.Lane))
		case !isSHA(l.Commit):
			bad = append(bad, fmt.Sprintf("lane %s records %.80q, not a commit SHA", l.Lane, l.Commit))
		case l.Commit != head:
			bad = append(bad, fmt.Sprintf("lane %s tested commit %s", l.Lane, l.Commit))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s, but the pull request's head is %s; nothing was published", ErrOtherCommit, strings.Join(bad, ", "), head)
	}
	return nil
}
