package gh

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"
)

// The pictures branch: failure pictures that a pull request's comment shows inline live on
// an orphan branch of the repository (DefaultAssetsBranch), one folder per report run
// (runs/<UTC time>-<run id>-<attempt>/…), written through the Git Database API (blobs,
// a tree, a commit, the ref) so that no checkout is needed. Every reader who may read the
// repository may see them at AssetURL, without downloading an artifact.
//
// Retention: each push keeps the newest Retention.Runs folders that are younger than
// Retention.MaxAge, and drops the rest from the tree. Every Retention.Runs pushes the branch
// is rewritten as a new orphan commit holding only what is kept, so that the history does
// not keep every picture ever pushed (a commit message counts the generation).
//
// Concurrency: a push is a fast-forward of the tip it read (422 "not a fast forward" when
// another push landed first: read again and retry); creating the branch fails with 422 when
// another run created it (retry); the orphan rewrite, which must force, first reads the ref
// again and retries if it moved, so that it only replaces the tip its tree was built from.

// DefaultAssetsBranch is the branch the pictures go to.
const DefaultAssetsBranch = "diffusion-check-assets"

// Retention is what a push to the pictures branch keeps.
type Retention struct {
	// Runs is how many run folders are kept (the newest; the one pushed is one of them),
	// and how many pushes go by between two orphan rewrites.
	Runs int
	// MaxAge drops folders older than it (0: no age limit).
	MaxAge time.Duration
}

// DefaultRetention keeps the last 50 runs of the last 30 days.
var DefaultRetention = Retention{Runs: 50, MaxAge: 30 * 24 * time.Hour}

// Asset is a file to push: Path is relative to the run's folder.
type Asset struct {
	Path string
	Data []byte
}

// maxPushAttempts bounds the retries of a push that raced with other pushes.
const maxPushAttempts = 8

// contentsPerm is the permission a push needs.
const contentsPerm = "contents: write"

// runFolderRE is a run folder of the branch: runs/20261201T174500Z-<run id>-<attempt>.
var runFolderRE = regexp.MustCompile(`^runs/([0-9]{8}T[0-9]{6}Z)-[0-9A-Za-z._-]+$`)

// assetPathRE is what an asset's path may be: plain names, no "..", no leading "/".
var assetPathRE = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$`)

// RunFolder is the folder of a run on the pictures branch: its start time (UTC, to the
// second), run ID and attempt, so that no two runs share one and retention can read its age.
func RunFolder(at time.Time, runID, attempt string) string {
	return "runs/" + at.UTC().Format("20060102T150405Z") + "-" + cmp.Or(runID, "local") + "-" + cmp.Or(attempt, "1")
}

// AssetURL is where a reader sees file path of branch: the repository's raw view, which
// GitHub serves to anyone who may read the repository (a private one's to signed-in
// members), for comments too. The folder is written once and never changed, so the URL
// shows the same picture for as long as retention keeps it.
func (g *Client) AssetURL(serverURL, branch, path string) string {
	return fmt.Sprintf("%s/%s/%s/raw/%s/%s", strings.TrimRight(serverURL, "/"), g.Owner, g.Repo, branch, path)
}

// PushAssets writes files into folder (RunFolder) of branch and returns each file's path on
// the branch (folder/file), in the order given. It creates the branch (as an orphan) when
// there is none. A refusal (403, 404) is ErrForbidden or ErrReadOnly as writeErr says: the
// caller then links the artifacts instead.
//
// GitHub API docs: https://docs.github.com/rest/git/blobs#create-a-blob
// GitHub API docs: https://docs.github.com/rest/git/trees#create-a-tree
// GitHub API docs: https://docs.github.com/rest/git/commits#create-a-commit
// GitHub API docs: https://docs.github.com/rest/git/refs#update-a-reference
//
//meta:operation GET /repos/{owner}/{repo}/git/ref/{ref}
//meta:operation GET /repos/{owner}/{repo}/git/commits/{commit_sha}
//meta:operation GET /repos/{owner}/{repo}/git/trees/{tree_sha}
//meta:operation POST /repos/{owner}/{repo}/git/blobs
//meta:operation POST /repos/{owner}/{repo}/git/trees
//meta:operation POST /repos/{owner}/{repo}/git/commits
//meta:operation POST /repos/{owner}/{repo}/git/refs
//meta:operation PATCH /repos/{owner}/{repo}/git/refs/{ref}
func (g *Client) PushAssets(ctx context.Context, branch, folder string, files []Asset, keep Retention, now time.Time) ([]string, error) {
	if !runFolderRE.MatchString(folder) {
		return nil, fmt.Errorf("pictures branch: folder %q is not a run folder (runs/TIME-RUN-ATTEMPT)", folder)
	}
	keep.Runs = max(keep.Runs, 1)
	what := fmt.Sprintf("push %d pictures to %s/%s branch %s", len(files), g.Owner, g.Repo, branch)
	// The blobs first: content-addressed, so a retry reuses them.
	added := map[string]string{}
	var paths []string
	for _, f := range files {
		if !assetPathRE.MatchString(f.Path) || strings.Contains(f.Path, "..") {
			return nil, fmt.Errorf("%s: file name %q", what, f.Path)
		}
		p := folder + "/" + f.Path
		if added[p] != "" {
			return nil, fmt.Errorf("%s: %s twice", what, p)
		}
		b, _, err := g.API.Git.CreateBlob(ctx, g.Owner, g.Repo,
			&github.Blob{Content: github.String(base64.StdEncoding.EncodeToString(f.Data)), Encoding: github.String("base64")})
		if err != nil {
			return nil, g.writeErr(what+": create blob", contentsPerm, err)
		}
		added[p] = b.GetSHA()
		paths = append(paths, p)
	}
	for attempt := 1; ; attempt++ {
		err := g.pushOnce(ctx, branch, folder, added, keep, now)
		if !errors.Is(err, errRaced) {
			if err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			return paths, nil
		}
		if attempt == maxPushAttempts {
			return nil, fmt.Errorf("%s: other pushes moved the branch %d times in a row: %w", what, attempt, err)
		}
	}
}

// errRaced marks a push that lost a race with another: read the tip again and retry.
var errRaced = errors.New("the branch moved")

// generationRE reads the generation a commit of the branch records.
var generationRE = regexp.MustCompile(`(?m)^Generation: ([0-9]+)$`)

// pushOnce reads the tip, builds the next tree (what retention keeps, and added), commits
// it and moves the ref, or returns errRaced.
func (g *Client) pushOnce(ctx context.Context, branch, folder string, added map[string]string, keep Retention, now time.Time) error {
	ref := "heads/" + branch
	tip, generation, entries, err := g.readTip(ctx, ref)
	if err != nil {
		return err
	}
	tree := map[string]string{}
	folders := map[string]bool{}
	for p, sha := range entries {
		if strings.HasPrefix(p, folder+"/") {
			if added[p] != "" && added[p] != sha {
				return fmt.Errorf("%s is on the branch already with other content; a run folder is written once", p)
			}
		}
		if f, ok := runFolder(p); ok {
			folders[f] = true
		}
		tree[p] = sha
	}
	for p, sha := range added {
		tree[p] = sha
	}
	folders[folder] = true
	for _, f := range prune(folders, folder, keep, now) {
		for p := range tree {
			if strings.HasPrefix(p, f+"/") {
				delete(tree, p)
			}
		}
	}
	readme, _, err := g.API.Git.CreateBlob(ctx, g.Owner, g.Repo, &github.Blob{Content: github.String(assetsReadme(keep)), Encoding: github.String("utf-8")})
	if err != nil {
		return g.writeErr("create blob README.md", contentsPerm, err)
	}
	tree["README.md"] = readme.GetSHA()
	var te []*github.TreeEntry
	for _, p := range slices.Sorted(maps.Keys(tree)) {
		te = append(te, &github.TreeEntry{Path: github.String(p), Mode: github.String("100644"), Type: github.String("blob"), SHA: github.String(tree[p])})
	}
	t, _, err := g.API.Git.CreateTree(ctx, g.Owner, g.Repo, "", te)
	if err != nil {
		return g.writeErr("create tree", contentsPerm, err)
	}
	orphan := tip == "" || generation+1 >= keep.Runs
	next := generation + 1
	commit := &github.Commit{Tree: &github.Tree{SHA: t.SHA}}
	if orphan {
		next = 0
	} else {
		commit.Parents = []*github.Commit{{SHA: github.String(tip)}}
	}
	commit.Message = github.String(fmt.Sprintf("diffusion-check pictures: %s\n\nGeneration: %d\n", folder, next))
	c, _, err := g.API.Git.CreateCommit(ctx, g.Owner, g.Repo, commit, nil)
	if err != nil {
		return g.writeErr("create commit", contentsPerm, err)
	}
	return g.moveRef(ctx, ref, tip, c.GetSHA(), orphan)
}

// moveRef points ref at sha: creates it when there was no tip, fast-forwards it, or (an
// orphan rewrite) forces it after checking that it still points at tip.
func (g *Client) moveRef(ctx context.Context, ref, tip, sha string, orphan bool) error {
	r := &github.Reference{Ref: github.String("refs/" + ref), Object: &github.GitObject{SHA: github.String(sha)}}
	if tip == "" {
		_, _, err := g.API.Git.CreateRef(ctx, g.Owner, g.Repo, r)
		if status(err) == http.StatusUnprocessableEntity { // created by another run meanwhile
			return errRaced
		}
		if err != nil {
			return g.writeErr("create branch", contentsPerm, err)
		}
		return nil
	}
	if orphan {
		now, _, err := g.API.Git.GetRef(ctx, g.Owner, g.Repo, ref)
		if err != nil {
			return fmt.Errorf("read %s again: %w", ref, err)
		}
		if now.GetObject().GetSHA() != tip {
			return errRaced
		}
	}
	_, _, err := g.API.Git.UpdateRef(ctx, g.Owner, g.Repo, r, orphan)
	if status(err) == http.StatusUnprocessableEntity { // not a fast-forward: another push landed
		return errRaced
	}
	if err != nil {
		return g.writeErr("update branch", contentsPerm, err)
	}
	return nil
}

// readTip reads the branch's tip commit, its generation and its files (path → blob); tip
// is "" when there is no branch yet.
func (g *Client) readTip(ctx context.Context, ref string) (tip string, generation int, files map[string]string, err error) {
	r, _, err := g.API.Git.GetRef(ctx, g.Owner, g.Repo, ref)
	if notFound(err) {
		return "", 0, nil, nil
	}
	if err != nil {
		return "", 0, nil, fmt.Errorf("read %s: %w", ref, err)
	}
	tip = r.GetObject().GetSHA()
	c, _, err := g.API.Git.GetCommit(ctx, g.Owner, g.Repo, tip)
	if err != nil {
		return "", 0, nil, fmt.Errorf("read commit %s: %w", shortSHA(tip), err)
	}
	if m := generationRE.FindStringSubmatch(c.GetMessage()); m != nil {
		generation, _ = strconv.Atoi(m[1])
	}
	t, _, err := g.API.Git.GetTree(ctx, g.Owner, g.Repo, c.GetTree().GetSHA(), true)
	if err != nil {
		return "", 0, nil, fmt.Errorf("read tree of %s: %w", shortSHA(tip), err)
	}
	if t.GetTruncated() {
		return "", 0, nil, fmt.Errorf("the tree of %s is too large for GitHub to list; delete the branch to start it again", shortSHA(tip))
	}
	files = map[string]string{}
	for _, e := range t.Entries {
		if e.GetType() == "blob" {
			files[e.GetPath()] = e.GetSHA()
		}
	}
	return tip, generation, files, nil
}

// runFolder is the run folder a path of the branch lies in.
func runFolder(path string) (string, bool) {
	parts := strings.SplitN(path, "/", 3)
	if len(parts) < 3 || !runFolderRE.MatchString(parts[0]+"/"+parts[1]) {
		return "", false
	}
	return parts[0] + "/" + parts[1], true
}

// prune lists the run folders retention drops: beyond the newest keep.Runs, or older than
// keep.MaxAge; never current, the one being pushed.
func prune(folders map[string]bool, current string, keep Retention, now time.Time) []string {
	all := slices.Sorted(maps.Keys(folders))
	slices.Reverse(all) // newest first: the names start with the time
	var drop []string
	for i, f := range all {
		if f == current {
			continue
		}
		at, err := time.Parse("20060102T150405Z", runFolderRE.FindStringSubmatch(f)[1])
		if i >= keep.Runs || err != nil || keep.MaxAge > 0 && now.Sub(at) > keep.MaxAge {
			drop = append(drop, f)
		}
	}
	return drop
}

// assetsReadme is the README of the pictures branch.
func assetsReadme(keep Retention) string {
	age := "no age limit"
	if keep.MaxAge > 0 {
		age = fmt.Sprintf("none older than %d days", int(keep.MaxAge.Hours()/24))
	}
	return fmt.Sprintf(`# diffusion-check pictures

Failure pictures (ground truth | output | SSIM map) that diffusion-check's pull request
comments show inline, one folder per report run. Written by "diffusion-check report
--publish"; do not commit here. Kept: the last %d runs, %s; older folders are dropped, and
the branch is rewritten as one orphan commit every %d pushes. Deleting the branch is safe: the
next run creates it again (older comments then show broken pictures).
`, keep.Runs, age, keep.Runs)
}
