package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// needGit skips a test that runs git where git is not installed.
func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed (scripts/setup installs it): the store fetch runs the git binary")
	}
}

// gitT runs git in dir for a test's setup and returns its trimmed output.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// testRepo is a bare repository laid out as SGLang's store under diffusion-ci/consistency_gt,
// with two commits on main: first (the one the tests pin, no longer the branch's tip) and
// second, which changes a file and adds one.
type testRepo struct {
	bare          string
	first, second string
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func newTestRepo(t *testing.T) testRepo {
	t.Helper()
	needGit(t)
	dir := t.TempDir()
	bare, work := filepath.Join(dir, "store.git"), filepath.Join(dir, "work")
	gitT(t, dir, "init", "-q", "--bare", bare)
	// As GitHub: a blob-less fetch is served, and the checkout fetches the blobs it needs.
	gitT(t, bare, "config", "uploadpack.allowFilter", "true")
	gitT(t, dir, "init", "-q", work)
	writeFiles(t, work, map[string]string{
		"diffusion-ci/consistency_gt/official_generated/case_map.json":      `{"cases": {"t2i": {"outputs": ["t2i_1gpu.png"]}}}`,
		"diffusion-ci/consistency_gt/official_generated/t2i_1gpu.png":       "official",
		"diffusion-ci/consistency_gt/sglang_generated/t2v_1gpu_frame_0.png": "sglang",
		"diffusion-comparisons/charts/latency.png":                          "not the store",
	})
	if err := os.Symlink("/etc/passwd", filepath.Join(work, "diffusion-ci/consistency_gt/sglang_generated/link.png")); err != nil {
		t.Fatal(err)
	}
	gitT(t, work, "add", "-A")
	gitT(t, work, "commit", "-q", "-m", "first")
	first := gitT(t, work, "rev-parse", "HEAD")
	writeFiles(t, work, map[string]string{"diffusion-ci/consistency_gt/official_generated/t2i_1gpu.png": "regenerated"})
	gitT(t, work, "add", "-A")
	gitT(t, work, "commit", "-q", "-m", "second")
	second := gitT(t, work, "rev-parse", "HEAD")
	gitT(t, work, "push", "-q", bare, "HEAD:refs/heads/main")
	return testRepo{bare: bare, first: first, second: second}
}

// counter records the git commands a Fetcher runs, by subcommand, running each with git.
type counter struct {
	mu   sync.Mutex
	cmds []string
	// before, when set, runs before each command and may replace its context or fail it.
	before func(ctx context.Context, sub string) (context.Context, error)
	// extra are arguments put before each command's own ("-c", "protocol.version=0").
	extra []string
}

func (c *counter) fetcher(cache string) Fetcher {
	f := Fetcher{Cache: cache}
	f.git = func(ctx context.Context, args []string) ([]byte, error) {
		sub := subcommand(args)
		c.mu.Lock()
		c.cmds = append(c.cmds, sub)
		c.mu.Unlock()
		if c.before != nil {
			var err error
			if ctx, err = c.before(ctx, sub); err != nil {
				return nil, err
			}
		}
		return f.runGit(ctx, append(slices.Clone(c.extra), args...))
	}
	return f
}

func (c *counter) count(sub string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.cmds {
		if sub == "" || s == sub {
			n++
		}
	}
	return n
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFetchPinnedCommit: the store's folder at the pinned commit (not the branch's tip), only
// that folder, without .git, a symbolic link as a plain file; a second fetch of the same
// store starts no git process.
func TestFetchPinnedCommit(t *testing.T) {
	r := newTestRepo(t)
	cache := filepath.Join(t.TempDir(), "gt")
	s := Store{Repo: r.bare, Commit: r.first, Path: "diffusion-ci/consistency_gt"}
	var c counter
	dir, fetched, err := c.fetcher(cache).Fetch(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !fetched || c.count("fetch") != 1 {
		t.Fatalf("fetched %v after %d git fetches (%v), want one shallow fetch", fetched, c.count("fetch"), c.cmds)
	}
	entry := filepath.Join(cache, r.first+"+diffusion-ci+consistency_gt")
	if dir != filepath.Join(entry, "diffusion-ci", "consistency_gt") {
		t.Errorf("store folder %s, want it under the entry %s", dir, entry)
	}
	if got := read(t, filepath.Join(dir, "official_generated", "t2i_1gpu.png")); got != "official" {
		t.Errorf("t2i_1gpu.png holds %q, want the pinned commit's %q", got, "official")
	}
	if got := read(t, filepath.Join(dir, "sglang_generated", "link.png")); got != "/etc/passwd" {
		t.Errorf("the symbolic link was checked out as %q, want a plain file holding its target's name", got)
	}
	if st, err := os.Lstat(filepath.Join(dir, "sglang_generated", "link.png")); err != nil || !st.Mode().IsRegular() {
		t.Errorf("link.png is not a regular file: %v %v", st, err)
	}
	for _, absent := range []string{".git", "diffusion-comparisons"} {
		if _, err := os.Lstat(filepath.Join(entry, absent)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is in the cache entry (%v); want only the store's folder", absent, err)
		}
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != 1 {
		t.Errorf("the cache holds %d entries, want the store's alone (no checkout under way left)", len(entries))
	}

	var again counter
	dir2, fetched, err := again.fetcher(cache).Fetch(context.Background(), s)
	if err != nil || dir2 != dir || fetched {
		t.Fatalf("second fetch: %s fetched=%v err=%v, want %s from the cache", dir2, fetched, err, dir)
	}
	// The cached store is verified (the commit's trees fetched, listed), not checked out again.
	if again.count("checkout") != 0 || again.count("fetch") != 1 || again.count("ls-tree") != 1 {
		t.Errorf("the cached store ran %v, want one fetch of the trees and one listing, no checkout", again.cmds)
	}

	// The same commit, another folder: an entry of its own.
	whole, _, err := again.fetcher(cache).Fetch(context.Background(), Store{Repo: "file://" + r.bare, Commit: r.first})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(whole, "diffusion-comparisons", "charts", "latency.png")); got != "not the store" {
		t.Errorf("the whole tree's latency.png holds %q", got)
	}
	// The whole repository's entry is verified against the commit's root tree, and used.
	cached, fetched, err := again.fetcher(cache).Fetch(context.Background(), Store{Repo: "file://" + r.bare, Commit: r.first})
	if err != nil || fetched || cached != whole {
		t.Errorf("the whole repository again: %s fetched=%v err=%v, want %s from the cache", cached, fetched, err, whole)
	}
}

// TestPlantedEntriesNeverPass: a cache entry an earlier job planted or changed (other bytes,
// a file more or less, a symbolic link, no folder at all) is found out against the commit's
// tree before it is used, removed, and the store fetched again, saying why; an entry for a
// commit the repository does not have is a NotFoundError, whatever it holds.
func TestPlantedEntriesNeverPass(t *testing.T) {
	r := newTestRepo(t)
	s := Store{Repo: r.bare, Commit: r.first, Path: "diffusion-ci/consistency_gt"}
	good := func(t *testing.T, cache string) string {
		dir, _, err := Fetcher{Cache: cache}.Fetch(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, cache, dir string)
		why   string
	}{
		{"other bytes", func(t *testing.T, _, dir string) {
			writeFiles(t, dir, map[string]string{"official_generated/t2i_1gpu.png": "a picture that passes"})
		}, "other bytes than the commit's: official_generated/t2i_1gpu.png"},
		{"a file more", func(t *testing.T, _, dir string) {
			writeFiles(t, dir, map[string]string{"sglang_generated/extra_1gpu.png": "planted"})
		}, "not in the commit: sglang_generated/extra_1gpu.png"},
		{"a file less", func(t *testing.T, _, dir string) {
			if err := os.Remove(filepath.Join(dir, "official_generated", "case_map.json")); err != nil {
				t.Fatal(err)
			}
		}, "missing: official_generated/case_map.json"},
		{"a symbolic link", func(t *testing.T, _, dir string) {
			p := filepath.Join(dir, "official_generated", "t2i_1gpu.png")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/etc/hostname", p); err != nil {
				t.Fatal(err)
			}
		}, "official_generated/t2i_1gpu.png is no regular file"},
		{"planted whole, no fetch before", func(t *testing.T, cache, _ string) {
			entry := filepath.Join(cache, s.entryName())
			if err := os.RemoveAll(entry); err != nil {
				t.Fatal(err)
			}
			writeFiles(t, filepath.Join(entry, "diffusion-ci", "consistency_gt"), map[string]string{"official_generated/t2i_1gpu.png": "planted"})
		}, "other bytes than the commit's: official_generated/t2i_1gpu.png; missing: official_generated/case_map.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			tc.plant(t, cache, good(t, cache))
			var told []string
			f := Fetcher{Cache: cache, Logf: func(format string, args ...any) { told = append(told, fmt.Sprintf(format, args...)) }}
			dir, fetched, err := f.Fetch(context.Background(), s)
			if err != nil || !fetched {
				t.Fatalf("fetched=%v err=%v, want the store fetched again", fetched, err)
			}
			if got := read(t, filepath.Join(dir, "official_generated", "t2i_1gpu.png")); got != "official" {
				t.Errorf("t2i_1gpu.png holds %q, want the commit's", got)
			}
			if len(told) != 1 || !strings.Contains(told[0], tc.why) || !strings.Contains(told[0], "removed, fetching the store again") {
				t.Errorf("told %q, want it to say %q", told, tc.why)
			}
		})
	}
	t.Run("a commit the repository lacks", func(t *testing.T) {
		cache := t.TempDir()
		missing := Store{Repo: r.bare, Commit: strings.Repeat("0", 39) + "1", Path: s.Path}
		writeFiles(t, filepath.Join(cache, missing.entryName(), "diffusion-ci", "consistency_gt"), map[string]string{"official_generated/t2i_1gpu.png": "planted"})
		_, _, err := Fetcher{Cache: cache}.Fetch(context.Background(), missing)
		var nf *NotFoundError
		if !errors.As(err, &nf) || !strings.Contains(err.Error(), "commit "+missing.Commit+" not found") {
			t.Errorf("err %v, want the commit not found", err)
		}
	})
}

// TestFetchWhereTheServerRefusesACommit: a server that will not be asked for a commit that is
// no branch's tip (protocol v0 without uploadpack.allowAnySHA1InWant) is fetched in full,
// blob-less, and the commit checked out from there.
func TestFetchWhereTheServerRefusesACommit(t *testing.T) {
	r := newTestRepo(t)
	c := counter{extra: []string{"-c", "protocol.version=0"}}
	dir, _, err := c.fetcher(t.TempDir()).Fetch(context.Background(), Store{Repo: r.bare, Commit: r.first, Path: "diffusion-ci/consistency_gt"})
	if err != nil {
		t.Fatal(err)
	}
	if c.count("fetch") != 2 {
		t.Errorf("%d fetches (%v), want the refused shallow one and the full one", c.count("fetch"), c.cmds)
	}
	if got := read(t, filepath.Join(dir, "official_generated", "t2i_1gpu.png")); got != "official" {
		t.Errorf("t2i_1gpu.png holds %q, want the pinned commit's", got)
	}
}

// TestFetchRefusals: a commit the repository lacks and a folder the commit lacks are
// NotFoundErrors naming repo and commit, a repository that is not there git's error naming
// them; a short SHA, a branch and a path out of the checkout are refused before any git
// process starts.
func TestFetchRefusals(t *testing.T) {
	r := newTestRepo(t)
	missing := strings.Repeat("0", 39) + "1"
	nowhere := filepath.Join(t.TempDir(), "nowhere.git")
	for _, tc := range []struct {
		name   string
		s      Store
		want   string
		found  bool // a NotFoundError
		gitRan bool
	}{
		{"wrong sha", Store{Repo: r.bare, Commit: missing}, "commit " + missing + " not found in " + r.bare, true, true},
		{"missing folder", Store{Repo: r.bare, Commit: r.first, Path: "nope"}, "path nope not found in " + r.bare + " at " + r.first, true, true},
		{"no repository", Store{Repo: nowhere, Commit: r.first}, "git fetch of " + nowhere + " at " + r.first + ": git fetch: exit status 128: fatal:", false, true},
		{"short sha", Store{Repo: r.bare, Commit: r.first[:12]}, "is a short SHA; write the full 40-hex commit SHA", false, false},
		{"branch", Store{Repo: r.bare, Commit: "main"}, `commit "main" is not a commit SHA (a branch or a tag moves)`, false, false},
		{"dot-dot path", Store{Repo: r.bare, Commit: r.first, Path: "../x"}, `path "../x" leaves the repository`, false, false},
		{"absolute path", Store{Repo: r.bare, Commit: r.first, Path: "/etc"}, `path "/etc" is absolute`, false, false},
		{"relative repo", Store{Repo: "store.git", Commit: r.first}, "a local repository is named by its absolute path", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c counter
			cache := t.TempDir()
			_, _, err := c.fetcher(cache).Fetch(context.Background(), tc.s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one saying %q", err, tc.want)
			}
			var nf *NotFoundError
			if errors.As(err, &nf) != tc.found {
				t.Errorf("NotFoundError %v, want %v: %v", !tc.found, tc.found, err)
			}
			if !tc.gitRan && c.count("") != 0 {
				t.Errorf("refused, yet %d git commands ran (%v)", c.count(""), c.cmds)
			}
			if entries, _ := os.ReadDir(cache); len(entries) != 0 {
				t.Errorf("the cache holds %d entries after a failed fetch, want none", len(entries))
			}
		})
	}
}

// TestFetchCancelledLeavesNothingTrusted: a fetch cancelled in the middle (after the objects
// came, before the checkout) leaves no entry and no partial checkout; the next fetch starts
// over and succeeds.
func TestFetchCancelledLeavesNothingTrusted(t *testing.T) {
	r := newTestRepo(t)
	cache := t.TempDir()
	s := Store{Repo: r.bare, Commit: r.first, Path: "diffusion-ci/consistency_gt"}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	c := counter{before: func(ctx context.Context, sub string) (context.Context, error) {
		if sub == "checkout" {
			cancel(errors.New("the run was cancelled"))
		}
		return ctx, nil
	}}
	_, _, err := c.fetcher(cache).Fetch(ctx, s)
	if err == nil || !strings.Contains(err.Error(), "the run was cancelled") {
		t.Fatalf("err %v, want the cancellation's cause", err)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Fatalf("the cancelled fetch left %v in the cache", entries)
	}
	var again counter
	dir, fetched, err := again.fetcher(cache).Fetch(context.Background(), s)
	if err != nil || !fetched {
		t.Fatalf("fetch after the cancel: fetched=%v err=%v, want a new fetch", fetched, err)
	}
	if got := read(t, filepath.Join(dir, "official_generated", "t2i_1gpu.png")); got != "official" {
		t.Errorf("t2i_1gpu.png holds %q", got)
	}
}

// TestFetchRace: two runs on one host fetch the same store at once (both past the cache look,
// both checked out before either installs): one installs its copy, the other discards its own
// and uses that one.
func TestFetchRace(t *testing.T) {
	r := newTestRepo(t)
	cache := t.TempDir()
	s := Store{Repo: r.bare, Commit: r.first, Path: "diffusion-ci/consistency_gt"}
	var arrived sync.WaitGroup
	arrived.Add(2)
	c := counter{before: func(ctx context.Context, sub string) (context.Context, error) {
		if sub == "rev-parse" {
			arrived.Done()
			arrived.Wait() // both checkouts are complete before either is installed
		}
		return ctx, nil
	}}
	type res struct {
		dir     string
		fetched bool
		err     error
	}
	out := make(chan res, 2)
	for range 2 {
		go func() {
			d, f, err := c.fetcher(cache).Fetch(context.Background(), s)
			out <- res{d, f, err}
		}()
	}
	a, b := <-out, <-out
	if a.err != nil || b.err != nil {
		t.Fatalf("errors %v, %v", a.err, b.err)
	}
	if a.dir != b.dir || a.fetched == b.fetched {
		t.Errorf("results %+v and %+v, want the same folder, installed by one of them", a, b)
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != 1 {
		t.Errorf("the cache holds %d entries, want one (the loser's copy discarded)", len(entries))
	}
	if got := read(t, filepath.Join(a.dir, "official_generated", "t2i_1gpu.png")); got != "official" {
		t.Errorf("t2i_1gpu.png holds %q", got)
	}
}

// TestFetchPrunesStaleCheckouts: a checkout under way older than a day (a killed run's) is
// removed by the next fetch; a recent one (another run's, still going) is left alone.
func TestFetchPrunesStaleCheckouts(t *testing.T) {
	r := newTestRepo(t)
	cache := t.TempDir()
	stale, fresh := filepath.Join(cache, tmpPrefix+"old"), filepath.Join(cache, tmpPrefix+"new")
	for _, d := range []string{stale, fresh} {
		writeFiles(t, d, map[string]string{"x": "half"})
	}
	old := time.Now().Add(-2 * staleAfter)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	var c counter
	if _, _, err := c.fetcher(cache).Fetch(context.Background(), Store{Repo: r.bare, Commit: r.second}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale checkout is still there (%v)", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("the recent checkout was removed: %v", err)
	}
}

// TestFetchWithoutGit: without git on PATH the error says so and how to install it.
func TestFetchWithoutGit(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, _, err := Fetcher{Cache: t.TempDir()}.Fetch(context.Background(), Store{Repo: "https://example.com/x.git", Commit: strings.Repeat("a", 40)})
	if err == nil || !strings.Contains(err.Error(), "git is not installed (scripts/setup installs it)") {
		t.Fatalf("err %v, want one saying git is not installed", err)
	}
	if !strings.HasPrefix(err.Error(), "git fetch of https://example.com/x.git at "+strings.Repeat("a", 40)+": ") {
		t.Errorf("err %v does not name the repo and the commit first", err)
	}
}
