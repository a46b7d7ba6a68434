package suite

import (
	"github.com/diffusion-check/diffusion-check/internal/gitstore"
	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
	"gopkg.in/yaml.v3"
)

// groundTruth reads `ground_truth:`: a folder (relative to the suite), or a mapping that pins a
// git store {repo, commit, path}, which the runner fetches. Repo, commit and path are checked
// here (internal/gitstore), so that a branch for a commit or a path out of the checkout fails
// when the suite is read.
func (d *decoder) groundTruth(o *object) (string, *gitstore.Store) {
	v, field, ok := o.get("ground_truth")
	if !ok {
		return "", nil
	}
	n := strictdecode.Deref(v)
	switch n.Kind {
	case yaml.ScalarNode:
		return d.path(n.Value), nil
	case yaml.MappingNode:
		return "", d.gitStore(v, field)
	}
	d.Addf(v.Line, field, "want a folder, or a pinned git store {repo, commit, path}, got %s", strictdecode.Describe(n))
	return "", nil
}

// gitStore reads `ground_truth: {repo, commit, path}`; nil after a reported problem.
func (d *decoder) gitStore(v *yaml.Node, field string) *gitstore.Store {
	o := d.object(v, field, keysOf(groundTruthObject)...)
	if o == nil {
		return nil
	}
	var s gitstore.Store
	ok := true
	for _, k := range []struct {
		key      string
		dst      *string
		valid    func(string) error
		optional bool // path: the repository's root when left out
	}{{"repo", &s.Repo, gitstore.CheckRepo, false}, {"commit", &s.Commit, gitstore.CheckCommit, false}, {"path", &s.Path, gitstore.CheckPath, true}} {
		get := o.require
		if k.optional {
			get = o.get
		}
		v, f, present := get(k.key)
		if !present {
			ok = ok && k.optional
			continue
		}
		val, isStr := d.str(v, f)
		switch {
		case !isStr:
			ok = false
		case val == "" && k.optional:
			d.Addf(v.Line, f, "empty; leave the key out for the repository's root")
			ok = false
		case k.valid(val) != nil:
			d.Addf(v.Line, f, "%v", k.valid(val))
			ok = false
		default:
			*k.dst = val
		}
	}
	if !ok {
		return nil
	}
	if !gitstore.IsURL(s.Repo) {
		s.Repo = d.path(s.Repo)
	}
	return &s
}
