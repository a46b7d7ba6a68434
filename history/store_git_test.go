package history

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// git runs git in dir, failing the test with its output on error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestConcurrentPushesOfTwoRunsNeverConflict: two jobs clone the data branch, each adds its
// run and prunes the same oldest file, and push; the one that lost the race resets to the
// branch as it is now and appends again (as the example workflow does), and the store has
// both runs.
func TestConcurrentPushesOfTwoRunsNeverConflict(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	origin := filepath.Join(root, "origin.git")
	git(t, root, "init", "-q", "--bare", "-b", "data", origin)
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	git(t, root, "clone", "-q", origin, a)
	git(t, a, "switch", "-q", "-c", "data")
	for i := 1; i <= 3; i++ {
		if _, err := Write(filepath.Join(a, "store"), storeRun(i, KindDefault)); err != nil {
			t.Fatal(err)
		}
	}
	git(t, a, "add", "-A")
	git(t, a, "commit", "-q", "-m", "three runs")
	git(t, a, "push", "-q", "origin", "data")
	git(t, root, "clone", "-q", "-b", "data", origin, b)

	for i, dir := range []string{a, b} {
		if _, err := Write(filepath.Join(dir, "store"), storeRun(4+i, KindDefault)); err != nil {
			t.Fatal(err)
		}
		removed, err := Prune(t.Context(), filepath.Join(dir, "store"), Keep{Default: 3, PR: 1})
		if err != nil || len(removed) != 1 {
			t.Fatalf("prune in %s: %v %v", dir, removed, err)
		}
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-q", "-m", "a run")
	}
	git(t, a, "push", "-q", "origin", "data")
	cmd := exec.CommandContext(t.Context(), "git", "push", "-q", "origin", "data")
	cmd.Dir = b
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("the second push was accepted without a rebase:\n%s", out)
	}
	// The job that lost the race starts again from the branch as it is now: its own append
	// (and prune) again, a fast-forward push. No merge, so nothing can conflict. (A rebase can:
	// git 2.39 takes "delete run 1, add run 5" against "delete run 1, add run 4" for two
	// renames of one file, a rename/rename conflict, whatever merge.renames says.)
	git(t, b, "fetch", "-q", "origin", "data")
	git(t, b, "reset", "-q", "--hard", "FETCH_HEAD")
	if _, err := Write(filepath.Join(b, "store"), storeRun(5, KindDefault)); err != nil {
		t.Fatal(err)
	}
	if _, err := Prune(t.Context(), filepath.Join(b, "store"), Keep{Default: 3, PR: 1}); err != nil {
		t.Fatal(err)
	}
	git(t, b, "add", "-A")
	git(t, b, "commit", "-q", "-m", "a run, again")
	git(t, b, "push", "-q", "origin", "data")

	runs, warnings, err := Load(t.Context(), filepath.Join(b, "store"))
	if err != nil || len(warnings) > 0 {
		t.Fatalf("load: %v %v", warnings, err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.RunID)
	}
	if got, want := strings.Join(ids, " "), "3-1 4-1 5-1"; got != want {
		t.Errorf("runs %s, want %s (both new runs, the oldest pruned to keep 3)", got, want)
	}
}
