package gitstore

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"github.com/diffusion-check/diffusion-check/internal/fetch"
)

// Store is a git repository pinned at one commit, and the folder in it that holds the store.
type Store struct {
	// Repo is an https:// URL, a file:// URL or the absolute path of a local repository.
	Repo string
	// Commit is the full 40-hex SHA-1 of the commit, in lower case.
	Commit string
	// Path is the store's folder in the repository, slash-separated (PathPattern); "" is the
	// repository's root.
	Path string
}

// String names the store for logs and errors: repo@commit, and the folder when there is one.
func (s Store) String() string {
	if s.Path == "" {
		return s.Repo + "@" + s.Commit
	}
	return s.Repo + "@" + s.Commit + ":" + s.Path
}

// CommitPattern is the form of a pinned commit: the full SHA-1, 40 lower-case hex digits. A
// branch or a tag moves, and a short SHA can become ambiguous; only the full SHA pins.
const CommitPattern = `^[0-9a-f]{40}$`

// pathPart is one folder name of a store's path: letters, digits, '.', '_' and '-', but not
// "." or "..". The names need no quoting in a sparse-checkout pattern or a cache entry's name.
const pathPart = `(\.?[A-Za-z0-9_-][A-Za-z0-9._-]*|\.\.[A-Za-z0-9._-]+)`

// PathPattern is the form of a store's path in its repository: folder names (pathPart) joined
// by '/', with no leading or trailing '/'. It is an RE2 and an ECMA-262 regular expression,
// for the suite's JSON Schema too.
const PathPattern = `^` + pathPart + `(/` + pathPart + `)*$`

var (
	commitRE = regexp.MustCompile(CommitPattern)
	pathRE   = regexp.MustCompile(PathPattern)
	hexRE    = regexp.MustCompile(`^[0-9a-fA-F]+$`)
)

// Check reports the first problem of the store's repository, commit and path.
func (s Store) Check() error {
	if err := CheckRepo(s.Repo); err != nil {
		return err
	}
	if err := CheckCommit(s.Commit); err != nil {
		return err
	}
	return CheckPath(s.Path)
}

// CheckCommit refuses anything but a full commit SHA (CommitPattern).
func CheckCommit(c string) error {
	switch {
	case commitRE.MatchString(c):
		return nil
	case hexRE.MatchString(c) && len(c) < 40:
		return fmt.Errorf("commit %q is a short SHA; write the full 40-hex commit SHA: a pinned store names its commit in full", c)
	case hexRE.MatchString(c) && len(c) == 40:
		return fmt.Errorf("commit %q: write the SHA in lower case, as git prints it", c)
	}
	return fmt.Errorf("commit %q is not a commit SHA (a branch or a tag moves); write the full 40-hex commit SHA", c)
}

// CheckPath refuses a path that is not a folder inside the repository (PathPattern); "" is
// the repository's root.
func CheckPath(p string) error {
	parts := strings.Split(p, "/")
	for _, part := range parts {
		// git's own folder is never checked out: a store there would always be "not found".
		if strings.EqualFold(part, ".git") {
			return fmt.Errorf("path %q names git's own folder .git, which no checkout holds; name the store's folder", p)
		}
	}
	if p == "" || pathRE.MatchString(p) {
		return nil
	}
	switch {
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is absolute; write the folder from the repository's root, e.g. diffusion-ci/consistency_gt", p)
	case strings.Contains(p, `\`):
		return fmt.Errorf("path %q: separate folders with /", p)
	case strings.HasSuffix(p, "/"):
		return fmt.Errorf("path %q: drop the trailing /", p)
	}
	for _, part := range parts {
		if part == ".." {
			return fmt.Errorf("path %q leaves the repository (a \"..\" part); the store must lie inside its checkout", p)
		}
		if part == "." || part == "" {
			return fmt.Errorf("path %q has an empty or \".\" part; write each folder once, e.g. diffusion-ci/consistency_gt", p)
		}
	}
	return fmt.Errorf("path %q: folder names may hold only letters, digits, '.', '_' and '-'", p)
}

// CheckRepo refuses a repository that is not an https:// URL, a file:// URL or a local path:
// no other transport (ssh, git://, http://, ext::), no credentials in a URL, nothing that git
// could read as an option.
func CheckRepo(repo string) error {
	// Every message shows the repository with its password masked: a refusal is printed, and
	// written to results.
	r := fetch.Redact(repo)
	for _, c := range repo {
		if unicode.IsControl(c) || unicode.IsSpace(c) {
			return fmt.Errorf("repo %q holds a space or a control character", r)
		}
	}
	if strings.HasPrefix(repo, "-") {
		return fmt.Errorf("repo %q starts with '-'", r)
	}
	scheme, _, isURL := strings.Cut(repo, "://")
	if !isURL {
		if i := strings.IndexByte(repo, ':'); i >= 0 && !strings.Contains(repo[:i], "/") {
			return fmt.Errorf("repo %q is an ssh or remote-helper address; write the https:// URL (stores are fetched anonymously)", r)
		}
		return nil // a local repository
	}
	u, err := url.Parse(repo)
	if err != nil {
		return fmt.Errorf("repo %q: not a URL", r) // url.Error would quote it whole
	}
	switch {
	case scheme != "https" && scheme != "file":
		return fmt.Errorf("repo %q: %s:// is not allowed; write an https:// URL (or, for a local repository, a file:// URL or a path)", r, scheme)
	case u.User != nil:
		return fmt.Errorf("repo %q holds credentials; stores are fetched anonymously, and the URL is written to logs and results", r)
	case scheme == "https" && u.Host == "":
		return fmt.Errorf("repo %q names no host", r)
	case scheme == "file" && (u.Host != "" || !strings.HasPrefix(u.Path, "/")):
		return fmt.Errorf("repo %q: a file:// URL names an absolute local path, file:///path/to/repo", r)
	}
	return nil
}

// local reports whether a repository (CheckRepo) is on this machine: a path or a file:// URL.
func local(r string) bool {
	return !strings.Contains(r, "://") || strings.HasPrefix(r, "file://")
}

// IsURL reports whether a repository is written as a URL (CheckRepo), not as a local path,
// which the suite resolves against its own folder.
func IsURL(r string) bool { return strings.Contains(r, "://") }

// entryName is the store's cache entry: the commit, and the path with '+' for '/' ('+' is in
// no folder name of PathPattern, so no two stores share an entry).
func (s Store) entryName() string {
	if s.Path == "" {
		return s.Commit
	}
	return s.Commit + "+" + strings.ReplaceAll(s.Path, "/", "+")
}

// dirIn is the store's folder inside a checkout at root.
func (s Store) dirIn(root string) string {
	return filepath.Join(root, filepath.FromSlash(s.Path))
}
