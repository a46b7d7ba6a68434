package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/gh"
	"github.com/diffusion-check/diffusion-check/internal/githubfake"
)

// publishEnv is the environment of a report --publish in a pull_request workflow against
// fake f, in dir, with the results of one passing lane on the PR head written to
// dir/results.json.
func publishEnv(t *testing.T, f *githubfake.Fake, dir string, extra map[string]string) (env, *bytes.Buffer) {
	t.Helper()
	ev := fmt.Sprintf(`{"number": 7, "pull_request": {"number": 7, "head": {"sha": %q}}, "repository": {"full_name": "octo/diffusion"}}`, scriptHead)
	res := fmt.Sprintf(`{"schema": "diffusion-check/results/v1", "suite": "ci", "lane": "base", "commit": %q,
 "partition": {"index": 0, "total": 1}, "status": "pass",
 "started_at": "2025-03-01T12:00:00Z", "finished_at": "2025-03-01T12:01:00Z",
 "cases": [{"id": "t2i", "server": "ref", "modality": "image", "status": "pass", "wall_ms": 3000,
   "requests": [{"index": 1, "of": 1, "status": "pass", "started_at": "2025-03-01T12:00:00Z", "e2e_ms": 2100,
     "checks": [{"name": "output.present", "status": "pass"}]}]}]}`, scriptHead)
	for name, data := range map[string]string{"event.json": ev, "results.json": res} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{
		"GITHUB_API_URL": f.URL() + "/api/v3", "GITHUB_TOKEN": "ghs_test", "GITHUB_REPOSITORY": "octo/diffusion",
		"GITHUB_EVENT_PATH": filepath.Join(dir, "event.json"), "GITHUB_EVENT_NAME": "pull_request",
	}
	for k, v := range extra {
		vars[k] = v
	}
	var stderr bytes.Buffer
	e := newEnv(func(k string) string { return vars[k] }, &bytes.Buffer{}, &stderr)
	e.transport = f.Transport()
	return e, &stderr
}

// TestRetryBudgetIsOneDeadlineForTheWholePublish: against a GitHub that never answers,
// report --publish --retry-budget 5s gives up 5 s after it started (on the bubble's clock),
// not after a per-request timeout for each of its requests (the audit saw 125 s), and says
// that it could not publish (exit 3).
func TestRetryBudgetIsOneDeadlineForTheWholePublish(t *testing.T) {
	for _, args := range [][]string{
		{"--publish", "--retry-budget", "5s", "--lane", "base,extra"},
		{"--publish", "--pending", "--retry-budget", "5s", "--lane", "base,extra"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			dir := t.TempDir()
			synctest.Test(t, func(t *testing.T) {
				f := githubfake.NewLocal(githubfake.Config{Owner: "octo", Repo: "diffusion", Token: "ghs_test"})
				f.Inject(githubfake.Fault{Delay: 24 * time.Hour, Times: 1 << 20})
				e, stderr := publishEnv(t, f, dir, nil)
				if !slices.Contains(args, "--pending") {
					args = append(args, filepath.Join(dir, "results.json"))
				}
				start := time.Now()
				code, err := reportCmd(t.Context(), e, args)
				took := time.Since(start)
				if c := max(code, exitCode(err)); c != exitInfra {
					t.Errorf("exit %d (%v), want %d", c, err, exitInfra)
				}
				if took > 5*time.Second {
					t.Errorf("publishing took %v, want at most the 5s budget", took)
				}
				if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
					t.Errorf("err = %v, want it to say the deadline passed; stderr:\n%s", err, stderr)
				}
			})
		})
	}
}

// TestTrustedEventFailsClosed: run starts server commands only under the events known to be
// safe; comment and review events, pull_request_target, events not listed, a workflow_run
// whose payload names no head repository (or a fork's) are refused.
func TestTrustedEventFailsClosed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sha := scriptHead
	sameRepo := write("same.json",
		`{"workflow_run": {"head_sha": "`+sha+`", "head_repository": {"full_name": "octo/diffusion"}}, "repository": {"full_name": "octo/diffusion"}}`)
	noHead := write("nohead.json", `{"workflow_run": {"head_sha": "`+sha+`"}, "repository": {"full_name": "octo/diffusion"}}`)
	fork := write("fork.json",
		`{"workflow_run": {"head_sha": "`+sha+`", "head_repository": {"full_name": "mallory/diffusion"}}, "repository": {"full_name": "octo/diffusion"}}`)
	tests := []struct {
		event, actions, path string
		refused              string // "" for trusted
	}{
		{"", "", "", ""},
		{"push", "true", "", ""},
		{"pull_request", "true", "", ""},
		{"schedule", "true", "", ""},
		{"workflow_dispatch", "true", "", ""},
		{"workflow_run", "true", sameRepo, ""},
		{"", "true", "", ""},
		{"pull_request_target", "true", "", "refusing to run under pull_request_target"},
		{"issue_comment", "true", "", "refusing to run under issue_comment"},
		{"pull_request_review", "true", "", "refusing to run under pull_request_review"},
		{"pull_request_review_comment", "true", "", "refusing to run under pull_request_review_comment"},
		{"deployment", "true", "", "refusing to run under deployment"},
		{"workflow_run", "true", noHead, "names no head_repository"},
		{"workflow_run", "true", fork, "triggered from the fork mallory/diffusion"},
		{"workflow_run", "true", filepath.Join(dir, "missing.json"), "cannot tell whether a fork triggered it"},
	}
	for _, tt := range tests {
		vars := map[string]string{"GITHUB_EVENT_NAME": tt.event, "GITHUB_ACTIONS": tt.actions, "GITHUB_EVENT_PATH": tt.path}
		err := trustedEvent(t.Context(), newEnv(func(k string) string { return vars[k] }, io.Discard, io.Discard))
		switch {
		case tt.refused == "" && err != nil:
			t.Errorf("%s (actions %q): refused: %v", tt.event, tt.actions, err)
		case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused) || exitCode(err) != exitUsage):
			t.Errorf("%s (actions %q): err = %v, want exit 2 with %q", tt.event, tt.actions, err, tt.refused)
		}
	}
}

// TestSecurityDocListsTrustedEvents: docs/security.md names every event run trusts, so the
// list there is the one in code.
func TestSecurityDocListsTrustedEvents(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(b), "## Untrusted events do not start server commands")
	section, _, _ = strings.Cut(section, "\n## ")
	for _, ev := range gh.TrustedEvents {
		if !strings.Contains(section, "`"+ev+"`") {
			t.Errorf("docs/security.md does not list the trusted event %s", ev)
		}
	}
}
