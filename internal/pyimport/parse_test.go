package pyimport

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseImports reads every import form Python has, and nothing that only looks like one.
func TestParseImports(t *testing.T) {
	tests := []struct {
		name, src string
		want      []Import
	}{
		{"plain and aliased", "import a.b as c, d\n", []Import{{Module: "a.b", Line: 1}, {Module: "d", Line: 1}}},
		{"from, parenthesized over lines", "from a.b import (\n    c,  # why\n    d as e,\n)\n",
			[]Import{{Module: "a.b", Names: []string{"c", "d"}, Line: 1}}},
		{"relative", "from . import x\nfrom ..p.q import y\n",
			[]Import{{Level: 1, Names: []string{"x"}, Line: 1}, {Module: "p.q", Level: 2, Names: []string{"y"}, Line: 2}}},
		{"star", "from a import *\n", []Import{{Module: "a", Names: []string{"*"}, Line: 1}}},
		{"backslash continuation", "from a import \\\n    b\n", []Import{{Module: "a", Names: []string{"b"}, Line: 1}}},
		{"after a semicolon and a compound header", "x = 1; import a\ntry: import b\nexcept ImportError: b = None\n",
			[]Import{{Module: "a", Line: 1}, {Module: "b", Line: 2}}},
		{"inside a function is lazy", "def f():\n    import a\n    return a\nimport b\n",
			[]Import{{Module: "a", Line: 2, Lazy: true}, {Module: "b", Line: 4}}},
		{"inside a class body is not lazy", "class C:\n    import a\n", []Import{{Module: "a", Line: 2}}},
		{"strings and comments are not imports", "s = 'import a'\nt = \"\"\"\nfrom b import c\n\"\"\"\n# import d\nimport e\n",
			[]Import{{Module: "e", Line: 6}}},
		{"TYPE_CHECKING blocks never run", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\n    from b import c\n" +
			"else:\n    import d\nif typing.TYPE_CHECKING: import e\nimport f\n",
			[]Import{{Module: "typing", Names: []string{"TYPE_CHECKING"}, Line: 1}, {Module: "d", Line: 6}, {Module: "f", Line: 8}}},
		{"literal import_module", "import importlib\nm = importlib.import_module(\n    \"a.b\"\n)\nn = import_module('.c', package='p.q')\no = __import__(\"z\")\n",
			[]Import{{Module: "importlib", Line: 1}, {Module: "a.b", Line: 2}, {Module: "p.q.c", Line: 5}, {Module: "z", Line: 6}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, f.Imports); diff != "" {
				t.Errorf("imports (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseComputedImports: an import whose module is computed at run time is a site, named
// by its enclosing function, never guessed.
func TestParseComputedImports(t *testing.T) {
	src := `import importlib
class Reg:
    def load(self, name):
        return importlib.import_module(name)
    def load_rel(self, name):
        return importlib.import_module(f".{name}", package=__package__)

def outer():
    def _load(p):
        return importlib.util.spec_from_file_location("x", p)
for g in GROUPS:
    import_module(f"{__name__}.{g}")
x = importlib.import_module("a" "b")
`
	f, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Site{
		{Func: "Reg.load", Call: "import_module", Line: 4},
		{Func: "Reg.load_rel", Call: "import_module", Line: 6},
		{Func: "outer._load", Call: "spec_from_file_location", Line: 10},
		{Func: "", Call: "import_module", Line: 12},
		{Func: "", Call: "import_module", Line: 13}, // implicit concatenation: not one literal
	}
	if diff := cmp.Diff(want, f.Sites); diff != "" {
		t.Errorf("sites (-want +got):\n%s", diff)
	}
}

// TestParseDottedStrings keeps the qualified-name strings a registry loads by name, in both
// spellings, and no f-string or prose.
func TestParseDottedStrings(t *testing.T) {
	src := `A = "pkg.mod.Class"
B = 'pkg.ops:fused'
C = f"pkg.{x}.C"
D = "not a name."
E = "plain"
F = "see pkg.mod for details"
`
	f, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"pkg.mod.Class", "pkg.ops"}, f.Dotted); diff != "" {
		t.Errorf("dotted (-want +got):\n%s", diff)
	}
}

// TestParseErrorsNameTheLine: a source that cannot be tokenized is an error with its line.
func TestParseErrorsNameTheLine(t *testing.T) {
	for _, src := range []string{"import a\nx = 'open\n", "import a\nx = (1,\n", "s = \"\"\"never closed\n"} {
		if _, err := Parse([]byte(src)); err == nil {
			t.Errorf("%q: no error", src)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"import a.b as c\n", "from . import (x,\n y)\n", "def f():\n  import_module(f'{a}')\n",
		"if TYPE_CHECKING: import a\n", "s = r'''\\'''\n", "\\\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := Parse(src)
		if err == nil && file == nil {
			t.Fatal("nil file without an error")
		}
	})
}
