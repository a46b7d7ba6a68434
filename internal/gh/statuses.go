package gh

import (
	"context"
	"fmt"

	"github.com/google/go-github/v66/github"
)

// Status is a commit status: its context (e.g. "diffusion-check/base"), state (pending,
// success, failure or error), description (at most 140 characters, as GitHub allows) and
// the page it links to ("" for none).
type Status struct {
	Context, State, Description, TargetURL string
}

// SetStatus sets st on commit sha (the pull request's head, never the merge commit).
//
// GitHub API docs: https://docs.github.com/rest/commits/statuses#create-a-commit-status
//
//meta:operation POST /repos/{owner}/{repo}/statuses/{sha}
func (g *Client) SetStatus(ctx context.Context, sha string, st Status) error {
	rs := &github.RepoStatus{State: &st.State, Description: &st.Description, Context: &st.Context}
	if st.TargetURL != "" {
		rs.TargetURL = &st.TargetURL
	}
	if _, _, err := g.API.Repositories.CreateStatus(ctx, g.Owner, g.Repo, sha, rs); err != nil {
		return g.writeErr(fmt.Sprintf("set status %s on %s/%s@%s", st.Context, g.Owner, g.Repo, shortSHA(sha)), "statuses: write", err)
	}
	return nil
}

// maxStatusPages bounds LatestStatuses' pages: 100 contexts a page, far more than the lanes
// of any suite, so that a Link header that never ends (or loops) cannot keep it reading.
const maxStatusPages = 20

// LatestStatuses returns the latest status of every context on commit sha, as GitHub's
// combined status holds them (the most recent status of each context), through every page.
// Each lane's status is written on its own (SetStatus of one context never touches another),
// so what this returns is every lane's verdict as the last writer of each left it.
//
// GitHub API docs: https://docs.github.com/rest/commits/statuses#get-the-combined-status-for-a-specific-reference
//
//meta:operation GET /repos/{owner}/{repo}/commits/{ref}/status
func (g *Client) LatestStatuses(ctx context.Context, sha string) ([]Status, error) {
	opts := &github.ListOptions{PerPage: 100}
	var out []Status
	for pages := 1; ; pages++ {
		cs, resp, err := g.API.Repositories.GetCombinedStatus(ctx, g.Owner, g.Repo, sha, opts)
		if err != nil {
			return nil, fmt.Errorf("read the statuses of %s/%s@%s: %w", g.Owner, g.Repo, shortSHA(sha), err)
		}
		for _, s := range cs.Statuses {
			out = append(out, Status{Context: s.GetContext(), State: s.GetState(), Description: s.GetDescription(), TargetURL: s.GetTargetURL()})
		}
		if resp.NextPage == 0 || len(out) >= cs.GetTotalCount() {
			return out, nil
		}
		if pages == maxStatusPages {
			return nil, fmt.Errorf("read the statuses of %s/%s@%s: still more after %d pages (%d of %d statuses)", g.Owner, g.Repo, shortSHA(sha), pages, len(out),
				cs.GetTotalCount())
		}
		opts.Page = resp.NextPage
	}
}
