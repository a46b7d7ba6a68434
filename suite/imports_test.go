package suite

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/diffusion-check/diffusion-check/internal/pyimport"
)

// TestImportsLoad reads a server's imports: and refuses every malformed one with its line.
func TestImportsLoad(t *testing.T) {
	const head = "servers:\n  s:\n    builtin: {}\n    imports:\n"
	const tail = "cases:\n  - {id: c, server: s, modality: image, request: {size: 8x8}}\n"
	s, err := Parse("suite.yaml", []byte(head+`      root: python/
      modules: [sglang.multimodal_gen.runtime.entrypoints.cli.serve]
      dynamic:
        - {module: a.b, function: C.load, loads: package, package: a.plugins, recursive: true}
        - {module: a.c, loads: outside}
`+tail))
	if err != nil {
		t.Fatal(err)
	}
	want := &Imports{Root: "python", Lazy: "own", Modules: []string{"sglang.multimodal_gen.runtime.entrypoints.cli.serve"}, Line: 5,
		Dynamic: []DynamicImport{
			{Module: "a.b", Function: "C.load", Loads: pyimport.Package, Package: "a.plugins", Recursive: true, Line: 8},
			{Module: "a.c", Loads: pyimport.Outside, Line: 9},
		}}
	if diff := cmp.Diff(want, s.Servers["s"].Imports); diff != "" {
		t.Errorf("imports (-want +got):\n%s", diff)
	}

	bad := []struct{ body, want string }{
		{"      root: /python\n      modules: [a]\n", `suite.yaml:5: servers.s.imports.root: "/python": relative to the repository root already`},
		{"      root: ../up\n      modules: [a]\n", `suite.yaml:5: servers.s.imports.root: "../up": write the folder from the repository root`},
		{"      modules: [a-b, \"1x\"]\n", `suite.yaml:5: servers.s.imports.modules[0]: "a-b" is not a dotted Python module name`},
		{"      root: python\n", "suite.yaml:5: servers.s.imports.modules: missing"},
		{"      modules: []\n", "suite.yaml:5: servers.s.imports.modules: empty"},
		{
			"      modules: [a]\n      dynamic: [{module: a, loads: everything}]\n",
			`servers.s.imports.dynamic[0].loads: want one of package, named, qualified, outside, ignored, got "everything"`,
		},
		{"      modules: [a]\n      dynamic: [{module: a, loads: named}]\n", "servers.s.imports.dynamic[0].package: missing: loads: named names the package"},
		{
			"      modules: [a]\n      dynamic: [{module: a, loads: outside, package: b}]\n",
			"servers.s.imports.dynamic[0].package: only for loads: package or named",
		},
		{"      modules: [a]\n      lazy: sometimes\n", `servers.s.imports.lazy: want one of own, all, none, got "sometimes"`},
		{"      modules: [a]\n      nope: 1\n", `servers.s.imports: unknown key "nope"`},
	}
	for _, b := range bad {
		_, err := Parse("suite.yaml", []byte(head+b.body+tail))
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: error %v, want one with %q", b.body, err, b.want)
		}
	}
}
