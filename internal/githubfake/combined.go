package githubfake

import (
	"net/http"
	"regexp"
	"slices"
)

// combinedRE is GET /repos/{owner}/{repo}/commits/{ref}/status: the combined status of a
// commit.
var combinedRE = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/commits/([^/]+)/status$`)

// combined answers the combined status of a commit as GitHub does
// (https://docs.github.com/rest/commits/statuses#get-the-combined-status-for-a-specific-reference):
// the most recent status of each context, newest first, paginated (per_page, Link), with
// total_count the number of contexts and state failure when a context is error or failure,
// pending when there is none or one is pending, else success. Only a full commit SHA is
// resolved (the fake holds no branches); a read needs no write permission.
func (f *Fake) combined(w http.ResponseWriter, r *http.Request, m []string) {
	if !f.repoOK(w, r, m) {
		return
	}
	sha := m[3]
	if !shaRE.MatchString(sha) {
		f.problem("GET %s: %q is not a commit SHA", r.URL.Path, sha)
		writeError(w, http.StatusUnprocessableEntity, "No commit found for SHA: "+sha)
		return
	}
	var latest []Status
	seen := map[string]bool{}
	for _, s := range slices.Backward(f.statuses) {
		if s.SHA == sha && !seen[s.Context] {
			seen[s.Context] = true
			latest = append(latest, s)
		}
	}
	state := "success"
	if len(latest) == 0 {
		state = "pending"
	}
	for _, s := range latest {
		switch {
		case s.State == "failure" || s.State == "error":
			state = "failure"
		case s.State == "pending" && state != "failure":
			state = "pending"
		}
	}
	lo, hi := f.page(w, r, len(latest))
	out := []map[string]any{}
	for _, s := range latest[lo:hi] {
		j := map[string]any{"state": s.State, "context": s.Context, "description": s.Description}
		if s.TargetURL != "" {
			j["target_url"] = s.TargetURL
		}
		out = append(out, j)
	}
	writeJSON(w, http.StatusOK, map[string]any{"state": state, "sha": sha, "total_count": len(latest), "statuses": out})
}
