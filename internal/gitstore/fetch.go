package gitstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/proc"
)

// Fetcher fetches stores into a cache folder.
type Fetcher struct {
	// Cache is the folder of the cache entries, one per store (entryName); the checkouts under
	// way lie beside them (tmpPrefix).
	Cache string
	// Env is git's environment; nil is this process's. The variables that would point git at
	// another repository (GIT_DIR, …) are dropped, and GIT_TERMINAL_PROMPT=0 is added.
	Env []string
	// Logf, when set, hears why a cached entry was not used (it did not match the commit).
	Logf func(format string, args ...any)
	// MaxBytes caps the disk one fetch fills (its folder: git's objects and the checkout); 0
	// is DefaultMaxBytes. A fetch over it is stopped and refused with a *CapError.
	MaxBytes int64
	// git runs one git command (its arguments after "git") and returns its standard output;
	// nil runs the git binary (runGit). Tests count and interrupt the commands through it.
	git func(ctx context.Context, args []string) ([]byte, error)
}

// tmpPrefix begins the name of a checkout under way: never a cache entry, whatever it holds.
const tmpPrefix = ".tmp-"

// staleAfter is the age past which a checkout under way is taken for one a killed run left.
const staleAfter = 24 * time.Hour

// NotFoundError says that the repository has no such commit, or the commit no such folder.
type NotFoundError struct{ msg string }

func (e *NotFoundError) Error() string { return e.msg }

// Fetch returns the store's folder in the cache, fetching the store first when the cache has
// no entry for it (fetched says which). A cached entry is trusted for nothing: on a
// self-hosted runner any earlier job could have planted or changed it. Before every use it
// is verified against the pinned commit by git's own content addressing (verify): the trees
// of the commit are fetched (small: no file contents), and every file of the entry must be
// the blob the commit's tree names at its path, and no file more. An entry that does not
// match is removed and the store fetched again, saying why (Logf); a commit the repository
// lacks is a NotFoundError, cached or not. Two runs that fetch the same store at once each
// fetch into a folder of their own; the first to finish installs its copy and the other
// discards its own. Cancelling ctx stops git (its process group) and removes the partial
// checkout.
func (f Fetcher) Fetch(ctx context.Context, s Store) (dir string, fetched bool, err error) {
	if err := s.Check(); err != nil {
		return "", false, err
	}
	if local(s.Repo) && !IsURL(s.Repo) && !filepath.IsAbs(s.Repo) {
		return "", false, fmt.Errorf("repo %q: a local repository is named by its absolute path", s.Repo)
	}
	if f.Cache == "" {
		return "", false, errors.New("no cache folder for the store")
	}
	entry := filepath.Join(f.Cache, s.entryName())
	if _, err := os.Lstat(entry); err == nil {
		why, err := f.verify(ctx, s, entry)
		var nf *NotFoundError
		if errors.As(err, &nf) {
			_ = os.RemoveAll(entry) // it holds nothing of the repository's: no one's to keep
		}
		if err != nil {
			return "", false, err
		}
		if why == "" {
			return s.dirIn(entry), false, nil
		}
		if f.Logf != nil {
			f.Logf("ground-truth cache %s does not hold %s (%s): removed, fetching the store again", entry, s, why)
		}
		if err := os.RemoveAll(entry); err != nil {
			return "", false, fmt.Errorf("store cache: remove %s, which does not hold %s: %w", entry, s, err)
		}
	}
	if err := os.MkdirAll(f.Cache, 0o755); err != nil {
		return "", false, fmt.Errorf("store cache: %w", err)
	}
	pruneStale(f.Cache, time.Now().Add(-staleAfter))
	tmp, err := os.MkdirTemp(f.Cache, tmpPrefix+s.entryName()+"-")
	if err != nil {
		return "", false, fmt.Errorf("store cache: %w", err)
	}
	// A checkout that is not installed is never left behind (a killed run's is: staleAfter).
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := f.capped(ctx, s, tmp, func(ctx context.Context) error { return f.checkout(ctx, s, tmp) }); err != nil {
		return "", false, err
	}
	if err := os.Rename(tmp, entry); err != nil {
		// Another run installed the same store first: its copy is used once it is verified as
		// any cached entry is.
		if why, verr := f.verify(ctx, s, entry); verr == nil && why == "" {
			return s.dirIn(entry), false, nil
		}
		return "", false, fmt.Errorf("store cache: install %s: %w", entry, err)
	}
	return s.dirIn(entry), true, nil
}

// pruneStale removes the checkouts under way that began before cutoff: those of killed runs.
func pruneStale(cache string, cutoff time.Time) {
	entries, err := os.ReadDir(cache)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tmpPrefix) {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(cutoff) {
			_ = os.RemoveAll(filepath.Join(cache, e.Name()))
		}
	}
}

// checkout makes dir a checkout of the store's commit, only the store's folder in it, and
// without .git: git init, a shallow blob-less fetch of the one commit, its sparse checkout
// (which fetches the blobs of the store's folder alone), and a check that HEAD is the commit.
// A server that refuses to be asked for a commit (a SHA "want") serves no blob-less fetch
// either: the repository is then fetched in full, its branches and tags with every blob.
func (f Fetcher) checkout(ctx context.Context, s Store, dir string) error {
	git := func(args ...string) ([]byte, error) { return f.gitIn(ctx, s, dir, args...) }
	fail := func(err error) error { return fmt.Errorf("git fetch of %s at %s: %w", s.Repo, s.Commit, err) }
	blobless, err := f.fetchCommit(ctx, s, dir)
	if err != nil {
		return err
	}
	if blobless {
		if err := f.checkFilter(ctx, s, dir); err != nil {
			return err
		}
	}
	if _, err := git("checkout", "-q", "--detach", s.Commit); err != nil {
		return fail(err)
	}
	head, err := git("rev-parse", "HEAD")
	if err != nil {
		return fail(err)
	}
	if got := strings.TrimSpace(string(head)); got != s.Commit {
		return fail(fmt.Errorf("HEAD is %s after the checkout, not the commit", got))
	}
	if st, err := os.Lstat(s.dirIn(dir)); err != nil || !st.IsDir() {
		return &NotFoundError{fmt.Sprintf("path %s not found in %s at %s", s.Path, s.Repo, s.Commit)}
	}
	if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
		return fail(err)
	}
	return nil
}

// fetchCommit makes dir a repository that holds the store's commit and its trees: git init, a
// shallow blob-less fetch of the one commit (no file contents; a checkout fetches the blobs it
// needs). A server that refuses to be asked for a commit (a SHA "want") serves no blob-less
// fetch either: the repository is then fetched in full, its branches and tags with every blob.
// A commit the repository does not have is a NotFoundError. blobless says which fetch it was.
func (f Fetcher) fetchCommit(ctx context.Context, s Store, dir string) (blobless bool, err error) {
	git := func(args ...string) ([]byte, error) { return f.gitIn(ctx, s, dir, args...) }
	fail := func(err error) error { return fmt.Errorf("git fetch of %s at %s: %w", s.Repo, s.Commit, err) }
	if err := f.initRepo(ctx, s, dir); err != nil {
		return false, fail(err)
	}
	if _, shallow := git("fetch", "-q", "--no-tags", "--depth", "1", "--filter=blob:none", "origin", s.Commit); shallow != nil {
		// Anew: the failed fetch made the repository a partial clone of a server that serves none.
		if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
			return false, fail(err)
		}
		if err := f.initRepo(ctx, s, dir); err != nil {
			return false, fail(err)
		}
		if _, err := git("fetch", "-q", "--no-tags", "origin", "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"); err != nil {
			if err.Error() == shallow.Error() { // an unreachable or missing repository: one message
				return false, fail(err)
			}
			return false, fail(fmt.Errorf("%w (and asked for the commit alone: %w)", err, shallow))
		}
		if _, err := git("cat-file", "-e", s.Commit+"^{commit}"); err != nil {
			return false, &NotFoundError{fmt.Sprintf("commit %s not found in %s (on no branch or tag; asked for alone: %v)", s.Commit, s.Repo, shallow)}
		}
		return false, nil
	}
	return true, nil
}

// initRepo makes dir an empty repository whose remote origin is the store's, and whose
// checkouts hold only the store's folder (a sparse checkout, its pattern written directly:
// `git sparse-checkout set` wants a HEAD, which the repository does not have yet).
func (f Fetcher) initRepo(ctx context.Context, s Store, dir string) error {
	if _, err := f.gitIn(ctx, s, dir, "init", "-q"); err != nil {
		return err
	}
	if _, err := f.gitIn(ctx, s, dir, "remote", "add", "origin", s.Repo); err != nil {
		return err
	}
	if s.Path == "" {
		return nil
	}
	if _, err := f.gitIn(ctx, s, dir, "config", "core.sparseCheckout", "true"); err != nil {
		return err
	}
	info := filepath.Join(dir, ".git", "info")
	if err := os.MkdirAll(info, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(info, "sparse-checkout"), []byte("/"+s.Path+"/\n"), 0o644)
}

// gitIn runs git in dir with the settings every command of a fetch has: the repository's
// hooks off, symbolic links checked out as plain files (a store's link cannot point the run
// at a file outside it), no credential helper or extra header of the user's git config (the
// store is fetched anonymously), https only, or file for a local repository, and a transfer
// slower than 1 KB/s for a minute given up.
func (f Fetcher) gitIn(ctx context.Context, s Store, dir string, args ...string) ([]byte, error) {
	file := "never"
	if local(s.Repo) {
		file = "always"
	}
	full := []string{
		"-C", dir,
		"-c", "core.hooksPath=/dev/null",
		"-c", "core.symlinks=false",
		"-c", "protocol.allow=never",
		"-c", "protocol.https.allow=always",
		"-c", "protocol.file.allow=" + file,
		"-c", "credential.helper=",
		"-c", "http.extraHeader=",
		"-c", "http.lowSpeedLimit=1000",
		"-c", "http.lowSpeedTime=60",
	}
	full = append(full, args...)
	run := f.git
	if run == nil {
		run = f.runGit
	}
	return run(ctx, full)
}

// gitStderrMax bounds what is kept of a git command's standard error (its last bytes: git's
// "fatal:" line comes last).
const gitStderrMax = 4 << 10

// gitStdoutMax bounds a git command's standard output (a store's `ls-tree -r` lists a line of
// about 100 bytes per file); more is an error, never a list cut short.
const gitStdoutMax = 64 << 20

// runGit runs the git binary in its own process group, which a cancelled ctx terminates.
func (f Fetcher) runGit(ctx context.Context, args []string) ([]byte, error) {
	cmd := proc.Command(ctx, 5*time.Second, "git", args...)
	cmd.Env = gitEnviron(f.Env)
	stdout, stderr := &proc.Head{N: gitStdoutMax}, &proc.Tail{N: gitStderrMax}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if errors.Is(err, exec.ErrNotFound) {
		return nil, errors.New("git is not installed (scripts/setup installs it)")
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("git %s: %w", subcommand(args), context.Cause(ctx))
		}
		msg := strings.Join(strings.Fields(string(bytes.TrimSpace(stderr.Bytes()))), " ")
		return nil, fmt.Errorf("git %s: %w: %s", subcommand(args), err, cmp.Or(msg, "no message"))
	}
	if stdout.Over() {
		return nil, fmt.Errorf("git %s: more than %d MiB of output", subcommand(args), gitStdoutMax>>20)
	}
	return stdout.Bytes(), nil
}

// subcommand is the git command of a full argument list (after -C and the -c settings).
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-C", "-c":
			i++
		default:
			return args[i]
		}
	}
	return "git"
}

// gitEnviron is env (nil: this process's) without the variables that would point git at
// another repository or work tree, and with git's terminal prompt off, so that a store that
// asks for credentials fails instead of waiting for an answer.
func gitEnviron(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	redirect := []string{
		"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
		"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_TERMINAL_PROMPT", "GIT_ASKPASS", "SSH_ASKPASS",
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(redirect, k) {
			out = append(out, kv)
		}
	}
	return append(out, "GIT_TERMINAL_PROMPT=0")
}
