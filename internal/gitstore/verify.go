package gitstore

import (
	"bytes"
	"context"
	"crypto/sha1" //nolint:gosec // git's own object ids: a planted file must be a second preimage of its blob
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/inputfile"
)

// verify checks a cached entry against the store's pinned commit, and says why it does not
// hold it ("" when it does). The commit's trees come from a fetch of the commit without file
// contents (fetchCommit, into a folder of its own); the entry must hold, under the store's
// folder, exactly the files the commit's tree lists there, each one the blob the tree names
// (its git object id, computed from the cached bytes). A symbolic link, a folder where a file
// should be, a file more or less, or other bytes are a mismatch; anything the entry says about
// itself counts for nothing. An error is a failure to verify (the network, a commit the
// repository lacks: a NotFoundError), never a pass.
func (f Fetcher) verify(ctx context.Context, s Store, entry string) (string, error) {
	if st, err := os.Lstat(entry); err != nil || !st.IsDir() {
		return "the entry is no folder", nil
	}
	tmp, err := os.MkdirTemp(f.Cache, tmpPrefix+"verify-")
	if err != nil {
		return "", fmt.Errorf("store cache: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	trees := s
	trees.Path = "" // no sparse checkout: nothing is checked out
	err = f.capped(ctx, s, tmp, func(ctx context.Context) error {
		blobless, err := f.fetchCommit(ctx, trees, tmp)
		if err != nil || !blobless {
			return err
		}
		return f.checkFilter(ctx, s, tmp)
	})
	if err != nil {
		return "", err
	}
	want, err := f.treeBlobs(ctx, s, tmp)
	if err != nil {
		return "", err
	}
	got, why := entryBlobs(s.dirIn(entry))
	if why != "" {
		return why, nil
	}
	return compareBlobs(want, got), nil
}

// treeBlobs lists the blobs of the commit's tree under the store's folder, by path (with "/"),
// from `git ls-tree -r`: the object id of each file and symbolic link (a symbolic link is
// checked out as a plain file holding its target, whose blob is that text). A submodule is
// not checked out, and not listed. A folder the commit does not have is a NotFoundError.
func (f Fetcher) treeBlobs(ctx context.Context, s Store, dir string) (map[string]string, error) {
	tree := s.Commit + ":" + s.Path // "<commit>:" is its root tree
	if kind, err := f.gitIn(ctx, s, dir, "cat-file", "-t", tree); err != nil || strings.TrimSpace(string(kind)) != "tree" {
		return nil, &NotFoundError{fmt.Sprintf("path %s not found in %s at %s", s.Path, s.Repo, s.Commit)}
	}
	out, err := f.gitIn(ctx, s, dir, "ls-tree", "-r", "-z", "--full-tree", tree)
	if err != nil {
		return nil, fmt.Errorf("git ls-tree of %s at %s: %w", s.Repo, s.Commit, err)
	}
	blobs := map[string]string{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		fields := strings.Fields(string(meta))
		if !ok || len(fields) != 3 {
			return nil, fmt.Errorf("git ls-tree of %s at %s: an entry %q", s.Repo, s.Commit, rec)
		}
		if fields[1] != "blob" {
			continue // a submodule (commit): not checked out
		}
		blobs[string(path)] = fields[2]
	}
	return blobs, nil
}

// checkFilter refuses a blob-less fetch into dir that brought file contents all the same: a
// server that ignores --filter=blob:none (a local repository without uploadpack.allowFilter,
// or one that lies) sends every file of the commit, those outside the store's folder too. A
// blob in dir that is no file of the store's folder is refused, naming one, before anything
// is checked out or kept; the fetch stays within the disk cap either way (capped).
func (f Fetcher) checkFilter(ctx context.Context, s Store, dir string) error {
	out, err := f.gitIn(ctx, s, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objecttype) %(objectname)")
	if err != nil {
		return fmt.Errorf("git cat-file of %s at %s: %w", s.Repo, s.Commit, err)
	}
	var present []string
	for line := range strings.Lines(string(out)) {
		if kind, id, ok := strings.Cut(strings.TrimSpace(line), " "); ok && kind == "blob" {
			present = append(present, id)
		}
	}
	if len(present) == 0 {
		return nil
	}
	whole := s
	whole.Path = ""
	all, err := f.treeBlobs(ctx, whole, dir)
	if err != nil {
		return err
	}
	inside, where := map[string]bool{}, map[string]string{}
	for p, id := range all {
		if s.Path == "" || strings.HasPrefix(p, s.Path+"/") {
			inside[id] = true
		} else {
			where[id] = p
		}
	}
	var outside []string
	for _, id := range present {
		if !inside[id] {
			outside = append(outside, id)
		}
	}
	if len(outside) == 0 {
		return nil
	}
	slices.Sort(outside)
	example := "blob " + outside[0] + ", in no file of the commit"
	if p, ok := where[outside[0]]; ok {
		example = p
	}
	return fmt.Errorf("%s: asked for no file contents (--filter=blob:none), the server sent %d that are no file of the store (%s): "+
		"it ignores the filter; refused, nothing kept (a local repository serves the filter once `git config uploadpack.allowFilter true` is set in it)",
		s, len(outside), example)
}

// maxVerifyFileBytes bounds one cached file read to verify it: a ground-truth store holds
// pictures, videos and audio of at most a few hundred MiB each.
const maxVerifyFileBytes = 4 << 30

// entryBlobs computes the git object id of every file under dir, by path relative to it
// (with "/"); why is non-empty for something that is no plain file or folder.
func entryBlobs(dir string) (blobs map[string]string, why string) {
	blobs = map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is no regular file (%s)", rel, inputfile.Describe(d.Type()))
		}
		id, err := blobID(p)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		blobs[rel] = id
		return nil
	})
	if err != nil {
		return nil, err.Error()
	}
	return blobs, ""
}

// blobID is git's object id of a file's bytes as a blob: SHA-1 of "blob <size>\x00" and the
// bytes (the object format of a repository whose commits have 40-hex ids).
func blobID(path string) (string, error) {
	f, err := inputfile.Open(context.Background(), path)
	if err != nil {
		return "", err
	}
	defer f.Close() //nolint:errcheck // read-only: nothing to lose
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() || st.Size() > maxVerifyFileBytes {
		return "", errors.New("no regular file of at most 4 GiB")
	}
	h := sha1.New() //nolint:gosec // git's object id
	h.Write([]byte("blob " + strconv.FormatInt(st.Size(), 10) + "\x00"))
	n, err := io.Copy(h, io.LimitReader(f, st.Size()+1))
	if err != nil {
		return "", err
	}
	if n != st.Size() {
		return "", fmt.Errorf("changed while it was read (%d bytes, then %d)", st.Size(), n)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// compareBlobs says how the cached files differ from the commit's, naming up to three paths;
// "" when they are the same.
func compareBlobs(want, got map[string]string) string {
	var missing, extra, changed []string
	for p, id := range want {
		switch g, ok := got[p]; {
		case !ok:
			missing = append(missing, p)
		case g != id:
			changed = append(changed, p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			extra = append(extra, p)
		}
	}
	var parts []string
	for _, x := range []struct {
		what  string
		paths []string
	}{{"other bytes than the commit's", changed}, {"missing", missing}, {"not in the commit", extra}} {
		if len(x.paths) == 0 {
			continue
		}
		slices.Sort(x.paths)
		shown := x.paths[:min(3, len(x.paths))]
		more := ""
		if len(x.paths) > 3 {
			more = fmt.Sprintf(" and %d more", len(x.paths)-3)
		}
		parts = append(parts, fmt.Sprintf("%s: %s%s", x.what, strings.Join(shown, ", "), more))
	}
	return strings.Join(parts, "; ")
}
