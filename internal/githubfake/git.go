package githubfake

import (
	"crypto/sha1" //nolint:gosec // git's object names are SHA-1
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Git data, as GitHub's Git Database API serves it
// (https://docs.github.com/rest/git): blobs (base64 or utf-8), trees of blobs given in full
// (the fake takes no base_tree: diffusion-check always sends every entry), commits, and
// branch refs, whose update is refused with 422 "Update is not a fast forward" unless the
// new commit descends from the old or force is set — the refusal a concurrent push meets.

type gitCommit struct {
	tree    string
	parents []string
	message string
}

type gitData struct {
	blobs   map[string][]byte
	trees   map[string]map[string]string // tree sha → path → blob sha
	commits map[string]gitCommit
	refs    map[string]string // "heads/NAME" → commit sha
}

var (
	gitBlobsRE   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/git/blobs$`)
	gitTreesRE   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/git/trees$`)
	gitTreeRE    = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/git/trees/([0-9a-f]{40})$`)
	gitCommitsRE = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/git/commits$`)
	gitCommitRE  = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/git/commits/([0-9a-f]{40})$`)
	gitRefsRE    = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/git/refs$`)
	gitRefRE     = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/git/(?:ref|refs)/(heads/[A-Za-z0-9._/-]+)$`)
	blobPathRE   = regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$`)
)

func (g *gitData) init() {
	if g.blobs == nil {
		g.blobs, g.trees, g.commits, g.refs = map[string][]byte{}, map[string]map[string]string{}, map[string]gitCommit{}, map[string]string{}
	}
}

func objectID(kind string, data []byte) string {
	h := sha1.New() //nolint:gosec // git's object names are SHA-1
	fmt.Fprintf(h, "%s %d\x00", kind, len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// serveGit serves the Git Database API; false: the request is not one of it. f.mu is held.
func (f *Fake) serveGit(w http.ResponseWriter, r *http.Request, path string, body []byte) bool {
	f.git.init()
	var m []string
	switch {
	case r.Method == http.MethodPost && match(gitBlobsRE, path, &m):
		f.gitWrite(w, r, m, body, f.createBlob)
	case r.Method == http.MethodPost && match(gitTreesRE, path, &m):
		f.gitWrite(w, r, m, body, f.createTree)
	case r.Method == http.MethodGet && match(gitTreeRE, path, &m):
		if f.repoOK(w, r, m) {
			f.getTree(w, r, m[3])
		}
	case r.Method == http.MethodPost && match(gitCommitsRE, path, &m):
		f.gitWrite(w, r, m, body, f.createCommit)
	case r.Method == http.MethodGet && match(gitCommitRE, path, &m):
		if f.repoOK(w, r, m) {
			f.getCommit(w, m[3])
		}
	case r.Method == http.MethodPost && match(gitRefsRE, path, &m):
		f.gitWrite(w, r, m, body, f.createRef)
	case r.Method == http.MethodGet && match(gitRefRE, path, &m):
		if f.repoOK(w, r, m) {
			f.getRef(w, m[3])
		}
	case r.Method == http.MethodPatch && match(gitRefRE, path, &m):
		f.gitWrite(w, r, m, body, func(w http.ResponseWriter, r *http.Request, body []byte) { f.updateRef(w, r, m[3], body) })
	default:
		return false
	}
	return true
}

// gitWrite checks the repository and the token's contents permission, then writes.
func (f *Fake) gitWrite(w http.ResponseWriter, r *http.Request, m []string, body []byte, write func(http.ResponseWriter, *http.Request, []byte)) {
	if !f.repoOK(w, r, m) || !f.writable(w) {
		return
	}
	if f.cfg.NoContents {
		writeError(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	write(w, r, body)
}

func (f *Fake) createBlob(w http.ResponseWriter, r *http.Request, body []byte) {
	var b struct {
		Content  *string `json:"content"`
		Encoding *string `json:"encoding"`
	}
	if !f.decode(w, r, body, &b) {
		return
	}
	if b.Content == nil {
		f.invalid(w, r, "blob without content")
		return
	}
	data := []byte(*b.Content)
	switch enc := strings.ToLower(deref(b.Encoding)); enc {
	case "base64":
		d, err := base64.StdEncoding.DecodeString(*b.Content)
		if err != nil {
			f.invalid(w, r, "content is not base64: "+err.Error())
			return
		}
		data = d
	case "", "utf-8":
	default:
		f.invalid(w, r, fmt.Sprintf("encoding %q, want utf-8 or base64", enc))
		return
	}
	id := objectID("blob", data)
	f.git.blobs[id] = data
	writeJSON(w, http.StatusCreated, map[string]any{"sha": id})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (f *Fake) createTree(w http.ResponseWriter, r *http.Request, body []byte) {
	var b struct {
		BaseTree *string `json:"base_tree"`
		Tree     []struct {
			Path *string `json:"path"`
			Mode *string `json:"mode"`
			Type *string `json:"type"`
			SHA  *string `json:"sha"`
		} `json:"tree"`
	}
	if !f.decode(w, r, body, &b) {
		return
	}
	if b.BaseTree != nil {
		f.invalid(w, r, "base_tree: the fake takes whole trees (diffusion-check sends every entry)")
		return
	}
	files := map[string]string{}
	for i, e := range b.Tree {
		switch {
		case e.Path == nil || !blobPathRE.MatchString(*e.Path):
			f.invalid(w, r, fmt.Sprintf("tree[%d]: path %q", i, deref(e.Path)))
			return
		case deref(e.Mode) != "100644" || deref(e.Type) != "blob":
			f.invalid(w, r, fmt.Sprintf("tree[%d]: mode %q type %q, want a 100644 blob", i, deref(e.Mode), deref(e.Type)))
			return
		case e.SHA == nil || f.git.blobs[*e.SHA] == nil:
			f.invalid(w, r, fmt.Sprintf("tree[%d]: sha %q is not a blob of the repository", i, deref(e.SHA)))
			return
		case files[*e.Path] != "":
			f.invalid(w, r, fmt.Sprintf("tree[%d]: path %s twice", i, *e.Path))
			return
		}
		files[*e.Path] = *e.SHA
	}
	id := treeID(files)
	f.git.trees[id] = files
	writeJSON(w, http.StatusCreated, map[string]any{"sha": id})
}

// treeID names a tree by its entries (not git's exact encoding of nested trees, but as
// stable: the same files give the same name).
func treeID(files map[string]string) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		fmt.Fprintf(&b, "%s %s\n", p, files[p])
	}
	return objectID("tree", []byte(b.String()))
}

// getTree lists a tree recursively as GitHub does: an entry per folder (type tree) and per
// file (type blob).
func (f *Fake) getTree(w http.ResponseWriter, r *http.Request, id string) {
	files, ok := f.git.trees[id]
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	if r.URL.Query().Get("recursive") == "" {
		f.problem("GET %s: without recursive, only the top folder is listed", r.URL.Path)
	}
	dirs := map[string]bool{}
	var out []map[string]any
	for p, sha := range files {
		for d := p; strings.Contains(d, "/"); {
			d = d[:strings.LastIndex(d, "/")]
			dirs[d] = true
		}
		out = append(out, map[string]any{"path": p, "mode": "100644", "type": "blob", "sha": sha, "size": len(f.git.blobs[sha])})
	}
	for d := range dirs {
		out = append(out, map[string]any{"path": d, "mode": "040000", "type": "tree", "sha": objectID("tree", []byte(d))})
	}
	slices.SortFunc(out, func(a, b map[string]any) int { return strings.Compare(a["path"].(string), b["path"].(string)) })
	writeJSON(w, http.StatusOK, map[string]any{"sha": id, "tree": out, "truncated": false})
}

func (f *Fake) createCommit(w http.ResponseWriter, r *http.Request, body []byte) {
	var b struct {
		Message *string  `json:"message"`
		Tree    *string  `json:"tree"`
		Parents []string `json:"parents"`
	}
	if !f.decode(w, r, body, &b) {
		return
	}
	switch {
	case deref(b.Message) == "":
		f.invalid(w, r, "commit without a message")
		return
	case f.git.trees[deref(b.Tree)] == nil:
		f.invalid(w, r, fmt.Sprintf("tree %q is not a tree of the repository", deref(b.Tree)))
		return
	}
	for _, p := range b.Parents {
		if _, ok := f.git.commits[p]; !ok {
			f.invalid(w, r, fmt.Sprintf("parent %q is not a commit of the repository", p))
			return
		}
	}
	c := gitCommit{tree: *b.Tree, parents: b.Parents, message: *b.Message}
	f.nextID++
	id := objectID("commit", fmt.Appendf(nil, "%s %v %s %d", c.tree, c.parents, c.message, f.nextID))
	f.git.commits[id] = c
	writeJSON(w, http.StatusCreated, commitJSON(id, c))
}

func commitJSON(id string, c gitCommit) map[string]any {
	var parents []map[string]any
	for _, p := range c.parents {
		parents = append(parents, map[string]any{"sha": p})
	}
	return map[string]any{"sha": id, "message": c.message, "tree": map[string]any{"sha": c.tree}, "parents": parents}
}

func (f *Fake) getCommit(w http.ResponseWriter, id string) {
	c, ok := f.git.commits[id]
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, commitJSON(id, c))
}

func refJSON(ref, sha string) map[string]any {
	return map[string]any{"ref": "refs/" + ref, "object": map[string]any{"sha": sha, "type": "commit"}}
}

func (f *Fake) getRef(w http.ResponseWriter, ref string) {
	sha, ok := f.git.refs[ref]
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, refJSON(ref, sha))
}

func (f *Fake) createRef(w http.ResponseWriter, r *http.Request, body []byte) {
	var b struct {
		Ref *string `json:"ref"`
		SHA *string `json:"sha"`
	}
	if !f.decode(w, r, body, &b) {
		return
	}
	ref, ok := strings.CutPrefix(deref(b.Ref), "refs/")
	if !ok || !strings.HasPrefix(ref, "heads/") {
		f.invalid(w, r, fmt.Sprintf("ref %q, want refs/heads/NAME", deref(b.Ref)))
		return
	}
	if _, ok := f.git.commits[deref(b.SHA)]; !ok {
		f.invalid(w, r, fmt.Sprintf("sha %q is not a commit of the repository", deref(b.SHA)))
		return
	}
	if _, ok := f.git.refs[ref]; ok {
		writeError(w, http.StatusUnprocessableEntity, "Reference already exists")
		return
	}
	f.git.refs[ref] = *b.SHA
	writeJSON(w, http.StatusCreated, refJSON(ref, *b.SHA))
}

func (f *Fake) updateRef(w http.ResponseWriter, r *http.Request, ref string, body []byte) {
	var b struct {
		SHA   *string `json:"sha"`
		Force *bool   `json:"force"`
	}
	if !f.decode(w, r, body, &b) {
		return
	}
	old, ok := f.git.refs[ref]
	if !ok {
		writeError(w, http.StatusUnprocessableEntity, "Reference does not exist")
		return
	}
	if _, ok := f.git.commits[deref(b.SHA)]; !ok {
		f.invalid(w, r, fmt.Sprintf("sha %q is not a commit of the repository", deref(b.SHA)))
		return
	}
	if !(b.Force != nil && *b.Force) && !f.descends(*b.SHA, old) {
		writeError(w, http.StatusUnprocessableEntity, "Update is not a fast forward")
		return
	}
	f.git.refs[ref] = *b.SHA
	writeJSON(w, http.StatusOK, refJSON(ref, *b.SHA))
}

// descends says whether commit c has ancestor a (or is a).
func (f *Fake) descends(c, a string) bool {
	queue, seen := []string{c}, map[string]bool{}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		if x == a {
			return true
		}
		if !seen[x] {
			seen[x] = true
			queue = append(queue, f.git.commits[x].parents...)
		}
	}
	return false
}

// BranchFiles returns the files of branch name's tip, path → content, and its commit; ok
// is false when there is no such branch.
func (f *Fake) BranchFiles(name string) (files map[string][]byte, commit string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.git.init()
	commit, ok = f.git.refs["heads/"+name]
	if !ok {
		return nil, "", false
	}
	files = map[string][]byte{}
	for p, sha := range f.git.trees[f.git.commits[commit].tree] {
		files[p] = f.git.blobs[sha]
	}
	return files, commit, true
}

// BranchParents returns the parents of branch name's tip (none for an orphan commit).
func (f *Fake) BranchParents(name string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.git.init()
	return slices.Clone(f.git.commits[f.git.refs["heads/"+name]].parents)
}
