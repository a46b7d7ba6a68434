package main

import (
	"path/filepath"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/gh"
)

// TestRepoPathNamesTheSuiteAsGitHubDoes: an annotation's path is relative to the
// repository's root (the workspace), in slashes, whether --suite was given relative or
// absolute; a suite outside the repository has no path GitHub could show.
func TestRepoPathNamesTheSuiteAsGitHubDoes(t *testing.T) {
	ws := t.TempDir()
	t.Chdir(ws)
	ge := gh.Env{Workspace: ws}
	for _, tt := range []struct{ in, want string }{
		{"ci/suite.yaml", "ci/suite.yaml"},
		{filepath.Join(ws, "ci", "diffusion", "suite.yaml"), "ci/diffusion/suite.yaml"},
		{"./suite.yaml", "suite.yaml"},
	} {
		got, err := repoPath(ge, tt.in)
		if err != nil || got != tt.want {
			t.Errorf("repoPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, out := range []string{"../elsewhere/suite.yaml", filepath.Join(filepath.Dir(ws), "suite.yaml")} {
		if got, err := repoPath(ge, out); err == nil {
			t.Errorf("repoPath(%q) = %q, want an error (outside the repository)", out, got)
		}
	}
}
