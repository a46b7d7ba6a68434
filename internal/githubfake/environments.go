package githubfake

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
)

// Deployment environments, as GitHub's REST API describes them
// (https://docs.github.com/rest/deployments/environments#get-an-environment): 404 for an
// environment that does not exist, else its protection rules (required_reviewers with the
// reviewers, wait_timer) and can_admins_bypass. A workflow job that names a missing
// environment creates it, with no protection rules
// (https://docs.github.com/actions/how-tos/deploy/configure-and-manage-deployments/manage-environments):
// UseEnvironment.

// Environment is a deployment environment of the fake's repository.
type Environment struct {
	// Reviewers are the logins of its required reviewers (users); none: no
	// required_reviewers rule.
	Reviewers []string
	// WaitTimer is its wait_timer rule in minutes; 0: none.
	WaitTimer int
	// PreventSelfReview is the required_reviewers rule's prevent_self_review.
	PreventSelfReview bool
	// NoAdminBypass turns can_admins_bypass off (GitHub's default is on).
	NoAdminBypass bool
}

var environmentRE = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/environments/([^/]+)$`)

// SetEnvironment creates or replaces environment name, as a repository administrator does
// in Settings → Environments.
func (f *Fake) SetEnvironment(name string, e Environment) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.environments == nil {
		f.environments = map[string]Environment{}
	}
	f.environments[name] = e
}

// UseEnvironment is a workflow job that names environment name, as GitHub runs it: a
// missing environment is created then, with no protection rules, and the job is not held.
func (f *Fake) UseEnvironment(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.environments[name]; !ok {
		if f.environments == nil {
			f.environments = map[string]Environment{}
		}
		f.environments[name] = Environment{}
	}
}

// environment answers GET /repos/{o}/{r}/environments/{name}; m[3] is the name as the
// request escaped it.
func (f *Fake) environment(w http.ResponseWriter, r *http.Request, m []string) {
	if !f.repoOK(w, r, m) {
		return
	}
	name, err := url.PathUnescape(m[3])
	if err != nil {
		f.problem("GET %s: environment name: %v", r.URL.Path, err)
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	e, ok := f.environments[name]
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	rules := []map[string]any{}
	if e.WaitTimer > 0 {
		rules = append(rules, map[string]any{"id": 3736, "node_id": "MDQ6R2F0ZTM3MzY=", "type": "wait_timer", "wait_timer": e.WaitTimer})
	}
	if len(e.Reviewers) > 0 {
		var rv []map[string]any
		for _, login := range e.Reviewers {
			u := userOf(login)
			rv = append(rv, map[string]any{"type": "User", "reviewer": map[string]any{"login": u.Login, "id": u.ID, "type": "User"}})
		}
		rules = append(rules, map[string]any{"id": 3755, "node_id": "MDQ6R2F0ZTM3NTU=", "type": "required_reviewers",
			"prevent_self_review": e.PreventSelfReview, "reviewers": rv})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": 161088068, "node_id": "MDExOkVudmlyb25tZW50MTYxMDg4MDY4", "name": name,
		"url":        fmt.Sprintf("https://api.github.com/repos/%s/%s/environments/%s", f.cfg.Owner, f.cfg.Repo, url.PathEscape(name)),
		"html_url":   fmt.Sprintf("https://github.com/%s/%s/deployments/activity_log?environments_filter=%s", f.cfg.Owner, f.cfg.Repo, url.QueryEscape(name)),
		"created_at": "2025-03-01T12:00:00Z", "updated_at": "2025-03-01T12:00:00Z",
		"can_admins_bypass": !e.NoAdminBypass, "protection_rules": rules, "deployment_branch_policy": nil,
	})
}
