package pyimport

import (
	"slices"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// tree is a small package laid out as SGLang's diffusion server is: an entry point, a
// registry that walks a package, one that loads model modules by name, a lazy import and a
// qualified-name string.
func tree(t *testing.T) *Tree {
	t.Helper()
	fs := fstest.MapFS{
		"app/__init__.py": {Data: []byte("from app import util\n")},
		"app/util.py":     {Data: []byte("import os\n")},
		"app/serve.py":    {Data: []byte("from .registry import discover\nfrom . import models\nimport app.lazy_user\n")},
		"app/registry.py": {Data: []byte("import importlib, pkgutil\ndef discover():\n" +
			"    for m in pkgutil.walk_packages(p):\n        importlib.import_module(m)\n")},
		"app/pipelines/__init__.py":      {Data: []byte("")},
		"app/pipelines/a.py":             {Data: []byte("from ..layers import norm\n")},
		"app/pipelines/deep/__init__.py": {Data: []byte("")},
		"app/pipelines/deep/b.py":        {Data: []byte("")},
		"app/layers/__init__.py":         {Data: []byte("")},
		"app/layers/norm.py":             {Data: []byte("")},
		"app/layers/unused.py":           {Data: []byte("")},
		"app/models/__init__.py":         {Data: []byte("")},
		"app/models/registry.py":         {Data: []byte("import importlib\nclass Lazy:\n    def load(self):\n        return importlib.import_module(self.name)\n")},
		"app/models/dits/__init__.py":    {Data: []byte("")},
		"app/models/dits/qwen.py":        {Data: []byte("from app.models import registry\n")},
		"app/models/dits/flux.py":        {Data: []byte("")},
		"app/lazy_user.py":               {Data: []byte("BACKEND = \"app.backends.fast.Fast\"\ndef f():\n    from app.layers import unused\n")},
		"app/backends/__init__.py":       {Data: []byte("")},
		"app/backends/fast.py":           {Data: []byte("")},
		"app/bad-name.py":                {Data: []byte("")},
		"app/__pycache__/x.py":           {Data: []byte("")},
	}
	tr, err := OpenFS(fs)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

var testRules = []Rule{
	{Module: "app.registry", Func: "discover", Kind: Package, Loads: "app.pipelines", Recursive: true},
	{Module: "app.models.registry", Func: "Lazy.load", Kind: Named, Loads: "app.models"},
}

func members(g *Graph, mods ...string) []string {
	var in []string
	for _, m := range mods {
		if g.Has(m) {
			in = append(in, m)
		}
	}
	return in
}

// TestClosureFollowsPythonsImportRules: packages above a module run first, relative imports
// resolve against the importing package, a from-import of a submodule imports it, and only
// importable .py files are modules.
func TestClosureFollowsPythonsImportRules(t *testing.T) {
	tr := tree(t)
	if tr.Has("app.bad-name") || tr.Has("app.__pycache__.x") {
		t.Error("a file Python cannot import is a module")
	}
	g := tr.Closure([]string{"app.serve"}, testRules)
	for _, m := range []string{"app", "app.util", "app.serve", "app.registry", "app.models", "app.pipelines.a", "app.pipelines.deep.b", "app.layers.norm"} {
		if !g.Has(m) {
			t.Errorf("%s not in the closure", m)
		}
	}
	if diff := cmp.Diff([]string{"app.serve", "app.registry", "app.pipelines.a", "app.layers.norm"}, g.Chain("app.layers.norm")); diff != "" {
		t.Errorf("chain (-want +got):\n%s", diff)
	}
	if !g.Complete() {
		t.Errorf("closure not complete: %+v %+v %+v", g.Missing, g.Unresolved, g.Errs)
	}
}

// TestClosureLazy: imports inside functions and qualified-name strings count only when
// asked for, as what may run later.
func TestClosureLazy(t *testing.T) {
	tr := tree(t)
	later := []string{"app.layers.unused", "app.backends.fast"}
	if got := members(tr.Closure([]string{"app.serve"}, testRules), later...); len(got) != 0 {
		t.Errorf("without Lazy, the closure holds %v", got)
	}
	tr.Lazy = true
	if got := members(tr.Closure([]string{"app.serve"}, testRules), later...); !slices.Equal(got, later) {
		t.Errorf("with Lazy, the closure holds %v of %v", got, later)
	}
}

// TestClosureNamedRule: a registry that loads model modules by name takes those the entries
// name, or every one of its package when none is named (and says so).
func TestClosureNamedRule(t *testing.T) {
	tr := tree(t)
	narrow := tr.Closure([]string{"app.serve", "app.models.dits.qwen"}, testRules)
	if narrow.Has("app.models.dits.flux") || len(narrow.Broad) != 0 {
		t.Errorf("naming qwen still takes flux (broad %v)", narrow.Broad)
	}
	broad := tr.Closure([]string{"app.serve", "app.models.registry"}, testRules)
	if !broad.Has("app.models.dits.flux") || !broad.Has("app.models.dits.qwen") || len(broad.Broad) != 1 {
		t.Errorf("naming no model module does not take them all: flux %v qwen %v broad %v",
			broad.Has("app.models.dits.flux"), broad.Has("app.models.dits.qwen"), broad.Broad)
	}
}

// TestClosureIncomplete: an unresolved computed import, a missing entry and an unreadable
// module each leave the closure incomplete, named.
func TestClosureIncomplete(t *testing.T) {
	tr := tree(t)
	g := tr.Closure([]string{"app.serve", "app.models.dits.qwen", "app.nope"}, testRules[:1])
	if diff := cmp.Diff([]string{"app.nope"}, g.Missing); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
	if len(g.Unresolved) != 1 || g.Unresolved[0].Module != "app.models.registry" || g.Unresolved[0].Func != "Lazy.load" {
		t.Errorf("unresolved: %+v", g.Unresolved)
	}
	bad, err := OpenFS(fstest.MapFS{"p/__init__.py": {Data: []byte("x = (\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if g := bad.Closure([]string{"p"}, nil); len(g.Errs) != 1 || g.Complete() {
		t.Errorf("an unreadable module: errs %v", g.Errs)
	}
}

// TestModuleNames maps files to modules and back as Python does.
func TestModuleNames(t *testing.T) {
	for p, want := range map[string]string{"a/b/c.py": "a.b.c", "a/b/__init__.py": "a.b", "a/b-c.py": "", "a/b.txt": "", "__init__.py": ""} {
		if got := ModuleOf(p); got != want {
			t.Errorf("ModuleOf(%q) = %q, want %q", p, got, want)
		}
	}
	if got := PackageOf("a/b/gone.py"); got != "a.b" {
		t.Errorf("PackageOf = %q", got)
	}
	for _, c := range []struct {
		root, p, rel string
		ok           bool
	}{{"python", "python/a/b.py", "a/b.py", true}, {"python", "pythonx/a.py", "", false}, {".", "a.py", "a.py", true}} {
		if rel, ok := Rel(c.root, c.p); rel != c.rel || ok != c.ok {
			t.Errorf("Rel(%q, %q) = %q, %v", c.root, c.p, rel, ok)
		}
	}
}
