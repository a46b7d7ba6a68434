package gh

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v66/github"
)

// ErrGateOpen marks an approval environment that approves nothing: it does not exist, or it
// has no required reviewers. A job that names a missing environment is not held: GitHub
// creates the environment on first use, "with no protection rules or secrets configured"
// (https://docs.github.com/actions/how-tos/deploy/configure-and-manage-deployments/manage-environments),
// and the job runs at once (aws/aws-lc-rs#1226 and LeanerCloud/CUDly#1660 met it).
var ErrGateOpen = errors.New("the approval gate approves nothing")

// Gate is an approval environment as GitHub describes it, and what was checked.
type Gate struct {
	// Name is the environment's name.
	Name string
	// Reviewers are its required reviewers ("user octo", "team octo/maintainers").
	Reviewers []string
	// Notes are soft findings: protection an administrator may bypass, or that lets the
	// person who started the run approve it.
	Notes []string
}

// MaxEnvironmentName is GitHub's limit on an environment's name, in characters.
const MaxEnvironmentName = 255

// CheckGate reads environment name (GET /repos/{owner}/{repo}/environments/{name}) and fails
// closed: it returns an error wrapping ErrGateOpen when the environment does not exist (404)
// or has no required_reviewers rule with a reviewer, and any other error when GitHub could
// not be asked (the gate is then not proven either). The token needs read access to the
// repository: for a job's token permissions: actions: read, the "Actions" (read) that GitHub's
// docs of the environments endpoints name for fine-grained tokens.
//
// GitHub API docs: https://docs.github.com/rest/deployments/environments#get-an-environment
//
//meta:operation GET /repos/{owner}/{repo}/environments/{environment_name}
func (g *Client) CheckGate(ctx context.Context, name string) (Gate, error) {
	gate := Gate{Name: name}
	if name == "" || len([]rune(name)) > MaxEnvironmentName {
		return gate, fmt.Errorf("environment name %.80q: want 1 to %d characters", name, MaxEnvironmentName)
	}
	env, _, err := g.API.Repositories.GetEnvironment(ctx, g.Owner, g.Repo, url.PathEscape(name))
	fix := fmt.Sprintf("create it with Required reviewers (Settings → Environments → %s)", name)
	switch {
	case notFound(err):
		return gate, fmt.Errorf("%w: environment %q does not exist in %s/%s, and GitHub creates a missing environment on first use with no reviewers: a fork's "+
			"pull request would reach the self-hosted runners unapproved; %s", ErrGateOpen, name, g.Owner, g.Repo, fix)
	case status(err) == http.StatusUnauthorized || status(err) == http.StatusForbidden:
		return gate, fmt.Errorf("read environment %q of %s/%s: GitHub refused the token (%d): give the job \"permissions: actions: read\"; the gate is not "+
			"proven, so it fails closed: %w", name, g.Owner, g.Repo, status(err), err)
	case err != nil:
		return gate, fmt.Errorf("read environment %q of %s/%s: %w; the gate is not proven, so it fails closed", name, g.Owner, g.Repo, err)
	}
	var other []string
	for _, r := range env.ProtectionRules {
		if r.GetType() != "required_reviewers" {
			other = append(other, r.GetType())
			continue
		}
		for _, rv := range r.Reviewers {
			gate.Reviewers = append(gate.Reviewers, reviewerName(rv))
		}
		if !r.GetPreventSelfReview() {
			gate.Notes = append(gate.Notes, "the person who pushed may approve their own run (Prevent self-review is off)")
		}
	}
	if len(gate.Reviewers) == 0 {
		has := "no protection rules"
		if len(other) > 0 {
			has = "only " + strings.Join(other, ", ")
		}
		return gate, fmt.Errorf("%w: environment %q of %s/%s has no required reviewers (%s): a fork's pull request would reach the self-hosted runners "+
			"unapproved; add Required reviewers (Settings → Environments → %s)", ErrGateOpen, name, g.Owner, g.Repo, has, name)
	}
	if env.GetCanAdminsBypass() {
		gate.Notes = append(gate.Notes, "administrators may bypass the reviewers (Allow administrators to bypass configured protection rules is on)")
	}
	return gate, nil
}

// reviewerName names a required reviewer: "user LOGIN" or "team SLUG".
func reviewerName(rv *github.RequiredReviewer) string {
	switch r := rv.Reviewer.(type) {
	case *github.User:
		return "user " + r.GetLogin()
	case *github.Team:
		return "team " + r.GetSlug()
	}
	return strings.ToLower(rv.GetType()) + " ?"
}
