package selection

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/pyimport"
	"github.com/diffusion-check/diffusion-check/suite"
)

// Graphs holds the import graphs read for selections, by server, so that selections over
// one checkout read each server's graph once.
type Graphs struct{ byKey map[string]*importGraph }

// NewGraphs returns an empty set of graphs.
func NewGraphs() *Graphs { return &Graphs{byKey: map[string]*importGraph{}} }

// get is the graph of srv's imports in the repository at r.root, read on first use.
func (gs *Graphs) get(r resolver, srv *suite.Server) *importGraph {
	key := fmt.Sprintf("%s\x00%s\x00%s\x00%q\x00%+v", r.root, srv.Name, srv.Imports.Root, srv.Imports.Modules, srv.Imports.Dynamic)
	ig, ok := gs.byKey[key]
	if !ok {
		ig = r.graph(srv)
		gs.byKey[key] = ig
	}
	return ig
}

// decide is what a server's imports make of the changed paths: its graph (nil for a server
// without imports:), the paths left for its globs, and the first reason the changes select
// its cases ("no paths: it always runs" for a server with neither imports nor globs).
func (gs *Graphs) decide(r resolver, srv *suite.Server, changed []string, hasGlobs bool) (*importGraph, []string, string) {
	if srv.Imports == nil {
		if !hasGlobs {
			return nil, changed, "no paths: it always runs"
		}
		return nil, changed, ""
	}
	ig := gs.get(r, srv)
	rest, reason := ig.decide(changed, hasGlobs)
	return ig, rest, reason
}

// importGraph is the import closure of one server's entry modules, read from the
// repository's checkout (the pull request's head, in a plan job).
type importGraph struct {
	server, root string
	tree         *pyimport.Tree
	g            *pyimport.Graph
	err          error
}

// graph reads the closure of a server's `imports:`: every module-level import, and the lazy
// ones (inside functions, qualified-name strings) as imports.lazy says.
func (r resolver) graph(srv *suite.Server) *importGraph {
	im := srv.Imports
	ig := &importGraph{server: srv.Name, root: im.Root}
	ig.tree, ig.err = pyimport.Open(filepath.Join(r.root, filepath.FromSlash(im.Root)))
	if ig.err != nil {
		return ig
	}
	switch im.Lazy {
	case "all":
		ig.tree.Lazy = true
	case "own":
		ig.tree.Lazy, ig.tree.LazyIn = true, []string{commonPackage(im.Modules)}
	}
	// The suite's rules first: they override a built-in rule for the same function.
	rules := make([]pyimport.Rule, 0, len(im.Dynamic)+len(sglangRules))
	for _, d := range im.Dynamic {
		rules = append(rules, pyimport.Rule{Module: d.Module, Func: d.Function, Kind: d.Loads, Loads: d.Package,
			Recursive: d.Recursive, Source: fmt.Sprintf("the suite's imports.dynamic (line %d)", d.Line)})
	}
	rules = append(rules, sglangRules...)
	ig.g = ig.tree.Closure(im.Modules, rules)
	return ig
}

// decide applies the graph to the changed paths: the first reason a changed .py file below
// the root (or, for a case without globs, a change outside it) selects the case, and the
// changed paths left for the globs.
func (ig *importGraph) decide(changed []string, hasGlobs bool) (rest []string, reason string) {
	for _, p := range changed {
		rel, ok := pyimport.Rel(ig.root, p)
		if !ok || !strings.HasSuffix(p, ".py") {
			rest = append(rest, p)
			continue
		}
		if r := ig.reason(p, rel); r != "" && reason == "" {
			reason = r
		}
	}
	if reason == "" && !hasGlobs && len(rest) > 0 {
		reason = fmt.Sprintf("%s changed outside the Python tree %s/, and it has no paths: for such changes", rest[0], ig.root)
	}
	return rest, reason
}

// reason is why changed Python file p (rel below the source root) selects the server's
// cases, or "" when the server does not import it. A graph that is not known exactly
// selects on every Python change, saying why.
func (ig *importGraph) reason(p, rel string) string {
	g := ig.g
	switch {
	case ig.err != nil:
		return fmt.Sprintf("%s may affect it: the import graph of server %s cannot be read (%v)", p, ig.server, ig.err)
	case len(g.Missing) > 0:
		return fmt.Sprintf("%s may affect it: server %s's entry module %s is not in %s/", p, ig.server, g.Missing[0], ig.root)
	case len(g.Errs) > 0:
		return fmt.Sprintf("%s may affect it: a module server %s imports cannot be read (%v)", p, ig.server, g.Errs[0])
	case len(g.Unresolved) > 0:
		return fmt.Sprintf("%s may affect it: server %s imports a module by a computed name at %s, which no rule resolves (add one under imports.dynamic)",
			p, ig.server, g.Unresolved[0])
	}
	m := pyimport.ModuleOf(rel)
	if g.Has(m) {
		return fmt.Sprintf("%s is imported by server %s: %s", p, ig.server, shortChain(g.Chain(m)))
	}
	if m == "" || !ig.tree.Has(m) {
		if pkg := pyimport.PackageOf(rel); pkg != "" && g.Has(pkg) {
			return fmt.Sprintf("%s is not in the tree (deleted?) and was a module of package %s, which server %s imports", p, pkg, ig.server)
		}
	}
	return ""
}

// miss is the reason a case of this server was left out.
func (ig *importGraph) miss(globs []string, m matched) string {
	s := fmt.Sprintf("no changed Python file is among the %d modules server %s imports", ig.g.Len(), ig.server)
	if len(globs) > 0 {
		s += "; " + m.miss(globs)
	}
	if len(ig.g.Broad) > 0 {
		s += fmt.Sprintf(" (every module of %s counts: list the model's own modules in imports.modules to narrow it)", ig.g.Broad[0].Loads)
	}
	return s
}

// commonPackage is the longest dotted prefix the modules share ("a.b.c", "a.b.d" → "a.b"),
// or "" when they share none, which makes Tree.LazyIn match nothing but "".
func commonPackage(mods []string) string {
	if len(mods) == 0 {
		return ""
	}
	common := strings.Split(mods[0], ".")
	for _, m := range mods[1:] {
		parts := strings.Split(m, ".")
		n := 0
		for n < len(common) && n < len(parts) && common[n] == parts[n] {
			n++
		}
		common = common[:n]
	}
	if len(mods) == 1 && len(common) > 1 {
		common = common[:len(common)-1] // a lone entry module: its package
	}
	return strings.Join(common, ".")
}

// shortChain writes an import chain entry → … → module, keeping its ends.
func shortChain(chain []string) string {
	if len(chain) > 4 {
		chain = slices.Concat(chain[:1], []string{"…"}, chain[len(chain)-2:])
	}
	return strings.Join(chain, " → ")
}
