package suite

import (
	"fmt"
	"slices"
	"strings"

	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
	"gopkg.in/yaml.v3"

	"github.com/diffusion-check/diffusion-check/internal/pyimport"
)

// Imports are a server's Python entry points, for selection by the import graph of the
// server's own source (selection): a changed .py file below Root selects the
// server's cases when the modules the server imports include it.
type Imports struct {
	// Root is the folder that holds the top-level packages (SGLang's `python/`), relative
	// to the repository root, slash-separated; "." for the root itself.
	Root string
	// Modules are the entry modules: what the server command runs (its serve entry point)
	// and what it loads by name at run time that no rule can read from the source (its
	// pipeline, its model's modules).
	Modules []string
	// Dynamic are rules for imports by a computed name, on top of the built-in ones.
	Dynamic []DynamicImport
	// Lazy is which imports that may run later (inside functions, qualified-name strings)
	// are followed: one of lazyModes; default "own", those of the entries' own package.
	Lazy string
	Line int
}

// lazyModes are the values of imports.lazy: "own" follows the lazy imports of the modules in
// the entry modules' common package (sglang.multimodal_gen for SGLang's diffusion server)
// and the module-level imports of every module; "all" follows every lazy import; "none"
// only module-level imports.
var lazyModes = []string{"own", "all", "none"}

// DynamicImport says what one function's import by a computed name loads.
type DynamicImport struct {
	Module   string // the module that holds the call
	Function string // the enclosing function, as Class.method; "" for module level
	// Loads is how the call is resolved (pyimport.Kind): package (every module of Package),
	// named (the modules of Package that the entries name), qualified (a module named by a
	// qualified-name string of the source) or outside (nothing of the tree).
	Loads     pyimport.Kind
	Package   string
	Recursive bool // package: every module below Package, not only those directly in it
	Line      int
}

func (d *decoder) imports(o *object) *Imports {
	v, field, ok := o.get("imports")
	if !ok {
		return nil
	}
	io := d.object(v, field, keysOf(importsObject)...)
	if io == nil {
		return nil
	}
	im := &Imports{Root: ".", Lazy: lazyModes[0], Line: v.Line}
	if io.str("lazy", &im.Lazy) && !slices.Contains(lazyModes, im.Lazy) {
		d.Addf(io.lineOf("lazy"), strictdecode.Join(field, "lazy"), "want one of %s, got %q", strings.Join(lazyModes, ", "), im.Lazy)
	}
	if io.str("root", &im.Root) {
		if msg := rootProblem(im.Root); msg != "" {
			d.Addf(io.lineOf("root"), strictdecode.Join(field, "root"), "%s", msg)
		}
		im.Root = strings.TrimSuffix(im.Root, "/")
	}
	if mv, mf, ok := io.require("modules"); ok {
		if mods, ok := d.strings(mv, mf); ok {
			if len(mods) == 0 {
				d.Addf(mv.Line, mf, "empty: name the module the server command runs")
			}
			for i, m := range mods {
				d.moduleName(strictdecode.Deref(mv).Content[i].Line, fmt.Sprintf("%s[%d]", mf, i), m)
			}
			im.Modules = mods
		}
	}
	if dv, df, ok := io.get("dynamic"); ok {
		n := strictdecode.Deref(dv)
		if n.Kind != yaml.SequenceNode {
			d.Addf(dv.Line, df, "want a list of rules, got %s", strictdecode.Describe(n))
			return im
		}
		for i, el := range n.Content {
			if r, ok := d.dynamicRule(el, fmt.Sprintf("%s[%d]", df, i)); ok {
				im.Dynamic = append(im.Dynamic, r)
			}
		}
	}
	return im
}

// dynamicRule reads one rule of imports.dynamic; false after a reported problem with its shape.
func (d *decoder) dynamicRule(el *yaml.Node, f string) (DynamicImport, bool) {
	ro := d.object(el, f, keysOf(dynamicObject)...)
	if ro == nil {
		return DynamicImport{}, false
	}
	r := DynamicImport{Line: el.Line}
	if mv, mf, ok := ro.require("module"); ok {
		if s, ok := d.str(mv, mf); ok && d.moduleName(mv.Line, mf, s) {
			r.Module = s
		}
	}
	ro.str("function", &r.Function)
	if lv, lf, ok := ro.require("loads"); ok {
		if s, ok := d.str(lv, lf); ok {
			if k, known := pyimport.ParseKind(s); known {
				r.Loads = k
			} else {
				d.Addf(lv.Line, lf, "want one of %s, got %q", strings.Join(pyimport.KindNames(), ", "), s)
			}
		}
	}
	ro.str("package", &r.Package)
	switch {
	case r.Loads.NeedsPackage() && r.Package == "":
		d.Addf(el.Line, strictdecode.Join(f, "package"), "missing: loads: %s names the package whose modules are loaded", r.Loads)
	case r.Package != "" && !pyimport.ModuleName(r.Package):
		d.Addf(ro.lineOf("package"), strictdecode.Join(f, "package"), "%q is not a dotted Python package name", r.Package)
	case r.Package != "" && r.Loads != 0 && !r.Loads.NeedsPackage():
		d.Addf(ro.lineOf("package"), strictdecode.Join(f, "package"), "only for loads: package or named")
	}
	var rec *bool
	if ro.boolean("recursive", &rec) {
		r.Recursive = *rec
	}
	return r, true
}

// moduleName reports a module name that is not a dotted Python name; it returns whether s is one.
func (d *decoder) moduleName(line int, field, s string) bool {
	if pyimport.ModuleName(s) {
		return true
	}
	d.Addf(line, field, "%q is not a dotted Python module name", s)
	return false
}

// rootProblem says what is wrong with an imports root, as globProblem does for paths.
func rootProblem(r string) string {
	switch {
	case r == "" || r == ".":
		return ""
	case strings.HasPrefix(r, "/"):
		return fmt.Sprintf("%q: relative to the repository root already; drop the leading \"/\"", r)
	case strings.Contains(r, "\\"):
		return fmt.Sprintf("%q: write the folder with \"/\"", r)
	}
	for _, part := range strings.Split(strings.TrimSuffix(r, "/"), "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Sprintf("%q: write the folder from the repository root, without empty, \".\" or \"..\" parts", r)
		}
	}
	return ""
}
