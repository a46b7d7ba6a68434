package gh

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestReadEnvTakesEveryVariableFromTheLookup: every field comes from the lookup function
// (nothing else is read), with the defaults GitHub documents where a variable is empty.
func TestReadEnvTakesEveryVariableFromTheLookup(t *testing.T) {
	vars := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "octo/diffusion", "GITHUB_EVENT_NAME": "pull_request",
		"GITHUB_EVENT_PATH": "/ev.json", "GITHUB_RUN_ID": "42", "GITHUB_RUN_NUMBER": "7", "GITHUB_RUN_ATTEMPT": "2",
		"GITHUB_SERVER_URL": "https://ghes.example/", "GITHUB_API_URL": "https://ghes.example/api/v3",
		"GITHUB_TOKEN": "t", "GITHUB_SHA": "abc", "GITHUB_REF": "refs/pull/7/merge", "GITHUB_WORKSPACE": "/w",
		"GITHUB_STEP_SUMMARY": "/s.md", "GITHUB_OUTPUT": "/out",
	}
	var asked []string
	got := ReadEnv(func(k string) string { asked = append(asked, k); return vars[k] })
	want := Env{Actions: true, Repository: "octo/diffusion", EventName: "pull_request", EventPath: "/ev.json",
		RunID: "42", RunNumber: "7", RunAttempt: "2", ServerURL: "https://ghes.example", APIURL: "https://ghes.example/api/v3",
		Token: "t", SHA: "abc", Ref: "refs/pull/7/merge", Workspace: "/w", StepSummary: "/s.md", Output: "/out"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(asked) != len(vars) {
		t.Errorf("asked for %d variables %v, want each of the %d once", len(asked), asked, len(vars))
	}
	if u := got.RunURL(); u != "https://ghes.example/octo/diffusion/actions/runs/42" {
		t.Errorf("RunURL = %q", u)
	}
	if l := got.RunLabel(); l != "run #7" {
		t.Errorf("RunLabel = %q", l)
	}
	empty := ReadEnv(func(string) string { return "" })
	if empty.ServerURL != "https://github.com" || empty.RunURL() != "" || empty.RunLabel() != "" {
		t.Errorf("empty environment: %+v, run URL %q", empty, empty.RunURL())
	}
	if diff := cmp.Diff([]string{"GITHUB_TOKEN", "GITHUB_REPOSITORY"}, empty.Missing("GITHUB_TOKEN", "GITHUB_REPOSITORY")); diff != "" {
		t.Errorf("Missing (-want +got):\n%s", diff)
	}
	for _, repo := range []string{"", "octo", "/x", "octo/", "a/b/c"} {
		if _, _, err := (Env{Repository: repo}).OwnerRepo(); err == nil {
			t.Errorf("OwnerRepo accepted %q", repo)
		}
	}
}

// TestLogRetriesNamesTheStatus: a retried answer is told by its code and text, a transport
// error by the error, never as "503 <nil>".
func TestLogRetriesNamesTheStatus(t *testing.T) {
	var b strings.Builder
	log := LogRetries(&b)
	req := httptest.NewRequest(http.MethodGet, "https://api.github.com/repos/o/r/pulls/7/files", nil)
	log(Retry{Req: req, Status: http.StatusServiceUnavailable, Wait: 1500 * time.Millisecond, Why: "backing off"})
	log(Retry{Req: req, Err: errors.New("connection reset by peer"), Wait: time.Second})
	log(Retry{Req: req, Status: http.StatusForbidden, Wait: time.Minute, Why: rateLimitNoTime})
	want := "GitHub GET /repos/o/r/pulls/7/files: 503 Service Unavailable; retrying in 1.5s (backing off)\n" +
		"GitHub GET /repos/o/r/pulls/7/files: connection reset by peer; retrying in 1s\n" +
		"GitHub GET /repos/o/r/pulls/7/files: 403 Forbidden; retrying in 1m0s (" + rateLimitNoTime + ")\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
