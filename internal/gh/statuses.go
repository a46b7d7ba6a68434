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
