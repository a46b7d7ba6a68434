package gitstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newRepoWith is a bare repository whose main branch is one commit of files; allowFilter
// says whether it serves a blob-less fetch (uploadpack.allowFilter), as GitHub does.
func newRepoWith(t *testing.T, files map[string]string, allowFilter bool) (bare, commit string) {
	t.Helper()
	needGit(t)
	dir := t.TempDir()
	bare, work := filepath.Join(dir, "store.git"), filepath.Join(dir, "work")
	gitT(t, dir, "init", "-q", "--bare", bare)
	gitT(t, bare, "config", "uploadpack.allowFilter", fmt.Sprint(allowFilter))
	gitT(t, dir, "init", "-q", work)
	writeFiles(t, work, files)
	gitT(t, work, "add", "-A")
	gitT(t, work, "commit", "-q", "-m", "store")
	gitT(t, work, "push", "-q", bare, "HEAD:refs/heads/main")
	return bare, gitT(t, work, "rev-parse", "HEAD")
}

// emptyCache fails the test when the cache holds anything: an entry or a checkout under way.
func emptyCache(t *testing.T, cache string) {
	t.Helper()
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("the cache holds %v after a refusal, want nothing", entries)
	}
}

// TestFetchRefusesBlobsOutsideTheStore: a server that ignores --filter=blob:none (a local
// repository without uploadpack.allowFilter) sends a file outside the store's folder; the
// fetch is refused naming that file and the setting, and nothing is kept. A store that is the
// whole repository has no file outside it, and is fetched. A cached entry verified against
// such a server is refused the same way.
func TestFetchRefusesBlobsOutsideTheStore(t *testing.T) {
	files := map[string]string{"gt/a.png": "a", "gt/b.png": "b", "charts/latency.png": "not the store"}
	bare, commit := newRepoWith(t, files, false)
	cache := t.TempDir()
	var c counter
	_, _, err := c.fetcher(cache).Fetch(context.Background(), Store{Repo: bare, Commit: commit, Path: "gt"})
	for _, want := range []string{"asked for no file contents (--filter=blob:none), the server sent 1 that are no file of the store (charts/latency.png)",
		"git config uploadpack.allowFilter true"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err %v, want a refusal saying %q", err, want)
		}
	}
	if c.count("checkout") != 0 {
		t.Errorf("ran %v, want no checkout after the refusal", c.cmds)
	}
	emptyCache(t, cache)

	whole, _, err := c.fetcher(cache).Fetch(context.Background(), Store{Repo: bare, Commit: commit})
	if err != nil {
		t.Fatalf("the whole repository as the store: %v", err)
	}
	if got := read(t, filepath.Join(whole, "charts", "latency.png")); got != "not the store" {
		t.Errorf("latency.png holds %q", got)
	}

	// An entry fetched while the server honoured the filter, verified once it no longer does.
	filtered, commit2 := newRepoWith(t, files, true)
	s := Store{Repo: filtered, Commit: commit2, Path: "gt"}
	if _, _, err := c.fetcher(cache).Fetch(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	gitT(t, filtered, "config", "uploadpack.allowFilter", "false")
	if _, _, err := c.fetcher(cache).Fetch(context.Background(), s); err == nil || !strings.Contains(err.Error(), "(charts/latency.png)") {
		t.Fatalf("verify against a server that ignores the filter: err %v, want the refusal", err)
	}
}

// TestFetchOverTheCap: a store whose fetch fills more disk than MaxBytes is stopped and
// refused with a *CapError naming the store, the bytes reached and the cap, and leaves nothing
// in the cache; under a cap it fits, the same store is fetched.
func TestFetchOverTheCap(t *testing.T) {
	raw := make([]byte, 3<<20)
	_, _ = rand.Read(raw) // random: git's compression cannot shrink it below the cap
	big := string(raw)
	bare, commit := newRepoWith(t, map[string]string{"gt/video.mp4": big, "gt/case_map.json": "{}"}, true)
	s := Store{Repo: bare, Commit: commit, Path: "gt"}
	cache := t.TempDir()
	f := Fetcher{Cache: cache, MaxBytes: 2 << 20}
	_, _, err := f.Fetch(context.Background(), s)
	var over *CapError
	if !errors.As(err, &over) || over.Cap != 2<<20 || over.Reached <= over.Cap {
		t.Fatalf("err %v, want a *CapError over 2 MiB", err)
	}
	want := "the fetch of " + s.String() + " was stopped at "
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "over its cap of 2.0 MiB") {
		t.Errorf("err %q, want it to say %q and the cap", err, want)
	}
	emptyCache(t, cache)

	f.MaxBytes = 64 << 20
	dir, _, err := f.Fetch(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dir, "video.mp4")); got != big {
		t.Errorf("video.mp4 holds %d bytes, want %d", len(got), len(big))
	}
}

// TestVerifyAStoreOfManyFiles: a store of 300 files, whose `git ls-tree -r` is far longer
// than a git command's kept standard error, is verified whole and used from the cache: its
// listing is never cut short (which would read as files missing and fetch it again).
func TestVerifyAStoreOfManyFiles(t *testing.T) {
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("consistency_gt/sglang_generated/case_%03d_1gpu_frame_0.png", i)] = fmt.Sprint(i)
	}
	bare, commit := newRepoWith(t, files, true)
	s := Store{Repo: bare, Commit: commit, Path: "consistency_gt"}
	cache := t.TempDir()
	var logged []string
	f := Fetcher{Cache: cache, Logf: func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }}
	if _, fetched, err := f.Fetch(context.Background(), s); err != nil || !fetched {
		t.Fatalf("first fetch: fetched=%v err=%v", fetched, err)
	}
	dir, fetched, err := f.Fetch(context.Background(), s)
	if err != nil || fetched || len(logged) != 0 {
		t.Fatalf("second fetch: fetched=%v err=%v log %q, want the cached entry verified and used", fetched, err, logged)
	}
	if got := read(t, filepath.Join(dir, "sglang_generated", "case_299_1gpu_frame_0.png")); got != "299" {
		t.Errorf("the last file holds %q", got)
	}
}
