package gh

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/diffusion-check/diffusion-check/results"
)

// ErrForgedTarget marks an uploaded event that names another pull request, commit or
// repository than the trusted event of the running workflow: nothing is published.
var ErrForgedTarget = errors.New("the uploaded event does not match the workflow's own event")

// repoRE is an owner/name of the characters GitHub allows in them.
var repoRE = regexp.MustCompile(`^[A-Za-z0-9-]+/[A-Za-z0-9._-]+$`)

// validRepo says whether s is an owner/name that names one repository in an API path (not
// "." or "..", which a URL resolves away).
func validRepo(s string) bool {
	_, name, _ := strings.Cut(s, "/")
	return repoRE.MatchString(s) && name != "." && name != ".."
}

// Target is where a report is published, and how that was decided.
type Target struct {
	Event
	// Notes say how the pull request was found, or why there is none (statuses only).
	Notes []string
}

// Target decides where to publish from trusted data only: the running workflow's own event
// (GITHUB_EVENT_PATH; for the workflow_run pattern, the payload GitHub wrote about the run
// that finished) and, for a fork's pull request that a workflow_run payload does not list,
// the one pull request GitHub's API gives for the payload's head repository and commit
// (pullForCommit): open, into this repository, with exactly that head. An uploaded event
// (the artifact of the workflow_run pattern, written by code the pull request controls)
// may be given: it adds nothing, and if it names another pull request, commit or
// repository the result is an error wrapping ErrForgedTarget.
func (g *Client) Target(ctx context.Context, trusted Event, uploaded *Event) (Target, error) {
	repo := g.Owner + "/" + g.Repo
	t := Target{Event: trusted}
	if trusted.Repo != "" && trusted.Repo != repo {
		return Target{}, fmt.Errorf("the workflow's event is for repository %s, but GITHUB_REPOSITORY is %s", trusted.Repo, repo)
	}
	if trusted.WorkflowRun && trusted.Number == 0 {
		if trusted.HeadRepo != "" && !validRepo(trusted.HeadRepo) {
			return Target{}, fmt.Errorf("the workflow's event names head repository %.100q, not OWNER/NAME", trusted.HeadRepo)
		}
		pr, note, err := g.pullForCommit(ctx, trusted)
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

// pullForCommit finds the pull request of a workflow_run whose payload lists none, as it
// lists none for a fork's: from trusted data only. It asks the head repository of the
// trusted payload (GET /repos/{head}/commits/{sha}/pulls): GitHub lists a commit's pull
// requests only in a repository that has the commit, and a commit that exists only in the
// fork lists nothing when asked of this repository (TooTallNate/nx.js#410 verified it
// directly; quarkusio/pt.quarkus.io#389, qualcomm/eld#1883 and webpack/webpack#21530 met the
// same). When the head repository cannot be asked (404: deleted, or not visible to this
// token) or lists none, and the payload names the head branch, it lists this repository's
// open pull requests from that branch (GET /repos/{o}/{r}/pulls?head=OWNER:BRANCH). Either
// way it keeps only an open one into this repository, from the payload's head repository,
// whose head is exactly sha: what the fork controls (its repository, its branch names, how
// many pull requests it opens) cannot point the comment at another pull request. None, more
// than one, or a head repository that cannot be asked (404) is not an error: the statuses
// still go on the commit, and the note says why there is no comment.
func (g *Client) pullForCommit(ctx context.Context, ev Event) (int, string, error) {
	base := g.Owner + "/" + g.Repo
	headRepo, sha := cmp.Or(ev.HeadRepo, base), ev.HeadSHA
	pulls, err := g.commitPulls(ctx, headRepo, sha)
	asked := headRepo + "'s pull requests of the commit"
	if (notFound(err) || (err == nil && len(intoBase(pulls, base, headRepo)) == 0)) && validBranch(ev.HeadBranch) {
		owner, _, _ := strings.Cut(headRepo, "/")
		pulls, err = g.branchPulls(ctx, owner+":"+ev.HeadBranch)
		asked = fmt.Sprintf("%s's open pull requests from %s:%s", base, owner, ev.HeadBranch)
	}
	switch {
	case notFound(err):
		// Not an error: the statuses still go on the commit.
		return 0, fmt.Sprintf("%s cannot be asked for the pull requests of %s (404: deleted, or not visible to this token) and the event names no usable head "+
			"branch: statuses only, no comment", headRepo, shortSHA(sha)), nil
	case err != nil:
		return 0, "", fmt.Errorf("find the pull request of %s from %s: %w", shortSHA(sha), headRepo, err)
	}
	var found []int
	var moved []string
	for _, pr := range intoBase(pulls, base, headRepo) {
		if pr.GetHead().GetSHA() != sha {
			moved = append(moved, fmt.Sprintf("#%d's head moved on to %s", pr.GetNumber(), shortSHA(pr.GetHead().GetSHA())))
			continue
		}
		found = append(found, pr.GetNumber())
	}
	switch len(found) {
	case 0:
		why := ""
		if len(moved) > 0 {
			why = " (" + strings.Join(moved, ", ") + ": results of an earlier push)"
		}
		return 0, fmt.Sprintf("no open pull request of %s has head %s from %s%s (asked: %s): statuses only, no comment", base, shortSHA(sha), headRepo, why,
			asked), nil
	case 1:
		return found[0], fmt.Sprintf("pull request #%d found by its head commit %s from %s (asked: %s)", found[0], shortSHA(sha), headRepo, asked), nil
	}
	nums := make([]string, len(found))
	for i, n := range found {
		nums[i] = fmt.Sprintf("#%d", n)
	}
	return 0, fmt.Sprintf("%d open pull requests have head %s from %s (%s): statuses only, no comment, as it cannot be told which one this run is about",
		len(found), shortSHA(sha), headRepo, strings.Join(nums, ", ")), nil
}

// validBranch says whether s can be a branch name as git allows them (git check-ref-format:
// no control characters, spaces or ~^:?*[\), so that OWNER:BRANCH names one branch.
func validBranch(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return false
		}
	}
	return true
}

// intoBase keeps the open pull requests into base from headRepo.
func intoBase(pulls []*github.PullRequest, base, headRepo string) []*github.PullRequest {
	var out []*github.PullRequest
	for _, pr := range pulls {
		if pr.GetState() == "open" && strings.EqualFold(pr.GetBase().GetRepo().GetFullName(), base) &&
			strings.EqualFold(pr.GetHead().GetRepo().GetFullName(), headRepo) {
			out = append(out, pr)
		}
	}
	return out
}

// commitPulls lists the pull requests GitHub associates with commit sha in repository repo
// (owner/name), every page.
//
// GitHub API docs: https://docs.github.com/rest/commits/commits#list-pull-requests-associated-with-a-commit
//
//meta:operation GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls
func (g *Client) commitPulls(ctx context.Context, repo, sha string) ([]*github.PullRequest, error) {
	owner, name, _ := strings.Cut(repo, "/")
	opts := &github.ListOptions{PerPage: 100}
	var all []*github.PullRequest
	pages := newPager(fmt.Sprintf("pull requests of %s in %s", shortSHA(sha), repo))
	for {
		page, resp, err := g.API.PullRequests.ListPullRequestsWithCommit(ctx, owner, name, sha, opts)
		if err != nil {
			return nil, fmt.Errorf("list the pull requests of commit %s in %s: %w", shortSHA(sha), repo, err)
		}
		all = append(all, page...)
		next, err := pages.next(opts.Page, resp)
		if err != nil || next == 0 {
			return all, err
		}
		opts.Page = next
	}
}

// branchPulls lists this repository's open pull requests whose head is head
// (OWNER:BRANCH), every page.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#list-pull-requests
//
//meta:operation GET /repos/{owner}/{repo}/pulls
func (g *Client) branchPulls(ctx context.Context, head string) ([]*github.PullRequest, error) {
	opts := &github.PullRequestListOptions{State: "open", Head: head, ListOptions: github.ListOptions{PerPage: 100}}
	var all []*github.PullRequest
	pages := newPager(fmt.Sprintf("open pull requests of %s/%s from %s", g.Owner, g.Repo, head))
	for {
		page, resp, err := g.API.PullRequests.List(ctx, g.Owner, g.Repo, opts)
		if err != nil {
			return nil, fmt.Errorf("list the open pull requests of %s/%s from %s: %w", g.Owner, g.Repo, head, err)
		}
		all = append(all, page...)
		next, err := pages.next(opts.Page, resp)
		if err != nil || next == 0 {
			return all, err
		}
		opts.Page = next
	}
}

// ErrOtherCommit marks results that did not test the commit being published: their verdict
// is not this commit's, and nothing is published.
var ErrOtherCommit = errors.New("the results are not of the commit being published")

// CheckCommit refuses lanes whose results tested another commit than head (the pull
// request's head from the trusted event), or do not say which commit they tested: the
// runner records it (results.json "commit"), and an uploaded results file can name any.
func CheckCommit(lanes []results.Result, head string) error {
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

// PullHead returns the head commit of pull request number as GitHub has it now: a report
// whose commit is no longer it is of an earlier push.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#get-a-pull-request
//
//meta:operation GET /repos/{owner}/{repo}/pulls/{pull_number}
func (g *Client) PullHead(ctx context.Context, number int) (string, error) {
	pr, _, err := g.API.PullRequests.Get(ctx, g.Owner, g.Repo, number)
	if err != nil {
		return "", fmt.Errorf("read pull request #%d: %w", number, err)
	}
	return pr.GetHead().GetSHA(), nil
}
