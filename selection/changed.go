package selection

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/diffusion-check/diffusion-check/internal/proc"
)

// The readers of the changed paths a selection starts from: a list file (ReadChanged) and
// git (GitChanged). The pull request's files come from GitHub's API, read in cmd through
// internal/gh.

// maxChangedBytes bounds a changed-files list: far above any real change (GitHub lists at
// most 3,000 files), so that a runaway input fails instead of filling the memory.
const maxChangedBytes = 16 << 20

// gitTimeout bounds one git command: they read the local repository only.
const gitTimeout = time.Minute

// ReadChanged reads a changed-files list: one repository path a line ("-": stdin), blank
// lines ignored, duplicates dropped. The list is a pull request's data, so a path with a
// control character, an invalid UTF-8 sequence, or a "." or ".." part is refused by line.
func ReadChanged(name string, stdin io.Reader) ([]string, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer func() { _ = f.Close() }() // read only: a failed close loses nothing
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxChangedBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > maxChangedBytes {
		return nil, fmt.Errorf("%s: more than %d MiB; want one path a line", name, maxChangedBytes>>20)
	}
	return parseChanged(name, data)
}

// parseChanged parses the lines of a changed-files list; name names it in messages. Every
// bad line is named, each as name:line.
func parseChanged(name string, data []byte) ([]string, error) {
	var out []string
	var errs []error
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxChangedBytes)
	for line := 1; sc.Scan(); line++ {
		p := strings.TrimSuffix(sc.Text(), "\r")
		switch {
		case strings.TrimSpace(p) == "":
			continue
		case !utf8.ValidString(p):
			errs = append(errs, fmt.Errorf("%s:%d: not UTF-8: %q", name, line, p))
			continue
		}
		if why := ValidPath(p); why != "" {
			errs = append(errs, fmt.Errorf("%s:%d: %s", name, line, why))
			continue
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", name, err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// GitChanged lists the paths changed since the merge base of ref and HEAD in the repository
// at root, in the working tree (committed or not); a renamed file counts under both names.
// base is the merge base.
func GitChanged(ctx context.Context, root, ref string) (changed []string, base string, err error) {
	if strings.HasPrefix(ref, "-") {
		return nil, "", errors.New(`a ref does not start with "-"`)
	}
	out, err := runGit(ctx, root, "merge-base", ref, "HEAD")
	if err != nil {
		return nil, "", fmt.Errorf("find the merge base of %s and HEAD (is %s fetched? actions/checkout needs fetch-depth: 0): %w", ref, ref, err)
	}
	base = strings.TrimSpace(string(out))
	out, err = runGit(ctx, root, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", base, "--")
	if err != nil {
		return nil, "", fmt.Errorf("git diff against %.12s: %w", base, err)
	}
	for p := range strings.SplitSeq(string(out), "\x00") {
		if p == "" {
			continue
		}
		if why := ValidPath(p); why != "" {
			return nil, "", errors.New(why)
		}
		changed = append(changed, p)
	}
	return changed, base, nil
}

// GitRoot is the top level of the git repository that holds dir.
func GitRoot(ctx context.Context, dir string) (string, error) {
	out, err := runGit(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// runGit runs a git command in dir and returns its standard output; the error carries git's
// own message.
func runGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := proc.Command(ctx, 5*time.Second, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, cmp.Or(strings.TrimSpace(stderr.String()), "no message"))
	}
	return out, nil
}
