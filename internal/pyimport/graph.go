package pyimport

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// maxFileBytes bounds one module's source: a tree is checked out from a pull request.
const maxFileBytes = 8 << 20

// Tree is a Python source root: the folder that holds the top-level packages (SGLang's
// `python/`, which holds `sglang/`).
type Tree struct {
	// Lazy also follows what may run later rather than on import: the imports inside
	// functions (they run when the function is called) and the dotted strings that name a
	// module of the tree (a registry loads them by name when it is asked for them).
	Lazy bool
	// LazyIn, when not empty, limits Lazy to the modules of these packages.
	LazyIn  []string
	fsys    fs.FS
	modules map[string]string // module name → slash path of its file below the root
}

// Open indexes every importable .py file below root. Symbolic links are not followed (a
// pull request writes the tree).
func Open(root string) (*Tree, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("python source root: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("python source root %s: not a folder", root)
	}
	return OpenFS(os.DirFS(root))
}

// OpenFS indexes the .py files of fsys, as Open does for a folder.
func OpenFS(fsys fs.FS) (*Tree, error) {
	t := &Tree{fsys: fsys, modules: map[string]string{}}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(name, ".") || name == "__pycache__" || !identifier(name)) {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(name, ".py") {
			if m := ModuleOf(p); m != "" {
				t.modules[m] = p
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("python source root: %w", err)
	}
	return t, nil
}

// ModuleOf is the module name of a slash path below the root ("a/b/c.py" → "a.b.c",
// "a/b/__init__.py" → "a.b"), or "" when the path is not an importable module.
func ModuleOf(p string) string {
	rest, ok := strings.CutSuffix(p, ".py")
	if !ok {
		return ""
	}
	parts := strings.Split(rest, "/")
	if parts[len(parts)-1] == "__init__" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 {
		return ""
	}
	for _, part := range parts {
		if !identifier(part) {
			return ""
		}
	}
	return strings.Join(parts, ".")
}

// Has reports whether module is a module of the tree.
func (t *Tree) Has(module string) bool { _, ok := t.modules[module]; return ok }

// Len is the number of modules in the tree.
func (t *Tree) Len() int { return len(t.modules) }

// Kind is how a Rule resolves an import by a computed name.
type Kind int

const (
	// Package is a call that imports every module of package Loads (pkgutil.walk_packages when
	// Recursive, pkgutil.iter_modules otherwise).
	Package Kind = iota + 1
	// Named is a call that imports those modules of package Loads that the entry points name
	// (a registry that loads a model's modules by the architecture in its config); with none
	// of them named, every module of Loads.
	Named
	// Qualified is a call that imports a module named by a qualified-name string; the dotted
	// strings of the modules read are followed as imports, so nothing more is needed.
	Qualified
	// Outside is a call that loads files or modules from outside the tree (a model repository,
	// a third-party package).
	Outside
	// Ignored is a call never made by the program the entries start (a registry of
	// another server that shares the tree); the rule's Source says how that was checked.
	Ignored
)

// kindNames are the names of the kinds, as a suite writes them.
var kindNames = map[Kind]string{Package: "package", Named: "named", Qualified: "qualified", Outside: "outside", Ignored: "ignored"}

func (k Kind) String() string { return kindNames[k] }

// NeedsPackage reports whether a rule of this kind names the package it loads from.
func (k Kind) NeedsPackage() bool { return k == Package || k == Named }

// ParseKind reads a kind by its name.
func ParseKind(s string) (Kind, bool) {
	for k, n := range kindNames {
		if n == s {
			return k, true
		}
	}
	return 0, false
}

// KindNames are the names of every kind, in order.
func KindNames() []string {
	names := make([]string, 0, len(kindNames))
	for k := Package; k <= Ignored; k++ {
		names = append(names, kindNames[k])
	}
	return names
}

// Rule resolves the computed-name imports of one function of one module.
type Rule struct {
	Module, Func string
	Kind         Kind
	Loads        string // the package, for Package and Named
	Recursive    bool   // for Package
	Source       string // where the behaviour is read from, for the reasons and docs
}

// Unresolved is an import by a computed name that no rule resolves.
type Unresolved struct {
	Module string
	Site
}

func (u Unresolved) String() string {
	where := u.Module
	if u.Func != "" {
		where += " (" + u.Func + ")"
	}
	return fmt.Sprintf("%s line %d: %s by a computed name", where, u.Line, u.Call)
}

// Graph is the import closure of a set of entry modules.
type Graph struct {
	Entries []string
	// Missing are the entries that are not modules of the tree.
	Missing []string
	// Unresolved are the imports by a computed name that no rule resolves: any module of
	// the tree may be imported through them.
	Unresolved []Unresolved
	// Broad are the Named rules that, with no entry naming a module of their package,
	// took every module of it; each says which package, for the reason a selection gives.
	Broad []Rule
	// Errs are the modules of the closure that could not be read; what they import is
	// unknown.
	Errs []error
	via  map[string]string // module → the module whose import reached it ("" for entries)
}

// Has reports whether module is in the closure.
func (g *Graph) Has(module string) bool { _, ok := g.via[module]; return ok }

// Len is the number of modules in the closure.
func (g *Graph) Len() int { return len(g.via) }

// Chain is how the closure reaches module: an entry first, module last; nil when it does not.
func (g *Graph) Chain(module string) []string {
	if !g.Has(module) {
		return nil
	}
	var chain []string
	for m := module; ; m = g.via[m] {
		chain = append(chain, m)
		if g.via[m] == "" || len(chain) > len(g.via) {
			break
		}
	}
	slices.Reverse(chain)
	return chain
}

// Complete reports whether the closure is known exactly: every entry found, every module
// read, every computed-name import resolved.
func (g *Graph) Complete() bool {
	return len(g.Missing) == 0 && len(g.Unresolved) == 0 && len(g.Errs) == 0
}

// Closure follows every import from the entry modules: the static imports (an import of
// a.b.c runs a, a.b and a.b.c), literal import_module calls, the dotted strings that name a
// module of the tree, and the computed-name imports as the rules resolve them. Imports of
// modules outside the tree are not followed.
func (t *Tree) Closure(entries []string, rules []Rule) *Graph {
	w := &walk{t: t, g: &Graph{Entries: entries, via: map[string]string{}}}
	for _, e := range entries {
		if !t.Has(e) {
			w.g.Missing = append(w.g.Missing, e)
			continue
		}
		parts := strings.Split(e, ".")
		for i := 1; i < len(parts); i++ {
			w.add(strings.Join(parts[:i], "."), "")
		}
		if _, seen := w.g.via[e]; !seen {
			w.g.via[e] = ""
			w.queue = append(w.queue, e)
		}
	}
	for len(w.queue) > 0 {
		m := w.queue[0]
		w.queue = w.queue[1:]
		f, err := t.parse(m)
		if err != nil {
			w.g.Errs = append(w.g.Errs, err)
			continue
		}
		w.imports(m, f)
		for _, site := range f.Sites {
			w.site(m, site, entries, rules)
		}
	}
	return w.g
}

// walk is a Closure under way: the graph so far and the modules still to read.
type walk struct {
	t     *Tree
	g     *Graph
	queue []string
}

// add adds module m of the tree, imported from module from, once.
func (w *walk) add(m, from string) {
	if _, seen := w.g.via[m]; seen || !w.t.Has(m) {
		return
	}
	w.g.via[m] = from
	w.queue = append(w.queue, m)
}

// addChain adds a module and the packages above it, whose __init__ runs first.
func (w *walk) addChain(m, from string) {
	parts := strings.Split(m, ".")
	for i := 1; i <= len(parts); i++ {
		w.add(strings.Join(parts[:i], "."), from)
	}
}

// imports follows module m's static imports (a lazy one only where lazy imports are
// followed) and, where lazy, the dotted strings that name a module of the tree.
func (w *walk) imports(m string, f *File) {
	lazy := w.t.lazy(m)
	for _, imp := range f.Imports {
		if imp.Lazy && !lazy {
			continue
		}
		target := w.t.absolute(m, imp)
		if target == "" {
			continue
		}
		w.addChain(target, m)
		for _, n := range imp.Names {
			if n != "*" {
				w.add(target+"."+n, m)
			}
		}
	}
	for _, s := range f.Dotted {
		if p := w.t.longestModule(s); p != "" && lazy {
			w.addChain(p, m)
		}
	}
}

// site follows an import by a computed name in module m as its rule says, or records it as
// unresolved when no rule covers it.
func (w *walk) site(m string, site Site, entries []string, rules []Rule) {
	r, ok := findRule(rules, m, site.Func)
	if !ok {
		w.g.Unresolved = append(w.g.Unresolved, Unresolved{Module: m, Site: site})
		return
	}
	switch r.Kind {
	case Package:
		for _, sub := range w.t.below(r.Loads, r.Recursive) {
			w.addChain(sub, m)
		}
	case Named:
		named := func(e string) bool { return e != r.Module && strings.HasPrefix(e, r.Loads+".") }
		if slices.ContainsFunc(entries, named) {
			return
		}
		if !slices.ContainsFunc(w.g.Broad, func(b Rule) bool { return b.Loads == r.Loads }) {
			w.g.Broad = append(w.g.Broad, r)
		}
		for _, sub := range w.t.below(r.Loads, true) {
			w.addChain(sub, m)
		}
	}
}

// lazy reports whether what may run later is followed in module m.
func (t *Tree) lazy(m string) bool {
	if !t.Lazy || len(t.LazyIn) == 0 {
		return t.Lazy
	}
	return slices.ContainsFunc(t.LazyIn, func(p string) bool { return m == p || strings.HasPrefix(m, p+".") })
}

func findRule(rules []Rule, module, fn string) (Rule, bool) {
	for _, r := range rules {
		if r.Module == module && r.Func == fn {
			return r, true
		}
	}
	return Rule{}, false
}

// parse reads one module of the tree.
func (t *Tree) parse(m string) (*File, error) {
	p := t.modules[m]
	fh, err := t.fsys.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	defer fh.Close() //nolint:errcheck // opened read-only: nothing written to lose
	src, err := io.ReadAll(io.LimitReader(fh, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if len(src) > maxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB", p, maxFileBytes>>20)
	}
	f, err := Parse(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return f, nil
}

// absolute is the module an import of module m names, "" when it cannot name one of the
// tree (a relative import above the top package).
func (t *Tree) absolute(m string, imp Import) string {
	if imp.Level == 0 {
		return imp.Module
	}
	pkg := m
	if !strings.HasSuffix(t.modules[m], "/__init__.py") && t.modules[m] != "__init__.py" {
		pkg = parent(m)
	}
	for range imp.Level - 1 {
		if pkg == "" {
			return ""
		}
		pkg = parent(pkg)
	}
	switch {
	case pkg == "":
		return ""
	case imp.Module == "":
		return pkg
	}
	return pkg + "." + imp.Module
}

func parent(m string) string {
	if i := strings.LastIndexByte(m, '.'); i >= 0 {
		return m[:i]
	}
	return ""
}

// longestModule is the longest dotted prefix of s that is a module of the tree ("a.b.C" →
// "a.b" when a/b.py exists), or "".
func (t *Tree) longestModule(s string) string {
	for p := s; p != ""; p = parent(p) {
		if t.Has(p) {
			if !strings.Contains(p, ".") {
				return "" // a bare top-level package name says nothing
			}
			return p
		}
	}
	return ""
}

// below are the modules of package pkg: those directly in it, or every one under it.
func (t *Tree) below(pkg string, recursive bool) []string {
	var out []string
	for m := range t.modules {
		rest, ok := strings.CutPrefix(m, pkg+".")
		if ok && (recursive || !strings.Contains(rest, ".")) {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// PackageOf is the package a module's file lies in, by its slash path below the root
// ("a/b/c.py" → "a.b"), also for a file the tree does not hold (deleted by a change).
func PackageOf(p string) string {
	return ModuleOf(path.Dir(p) + "/__init__.py")
}

// Rel is p, a path below the repository root, relative to the source root rootRel (both
// slash paths); ok is false when p is not below it.
func Rel(rootRel, p string) (string, bool) {
	if rootRel == "" || rootRel == "." {
		return p, true
	}
	rel, ok := strings.CutPrefix(p, strings.TrimSuffix(filepath.ToSlash(rootRel), "/")+"/")
	if !ok {
		return "", false
	}
	return rel, true
}
