package archtest

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// The export rules of docs/architecture.md ("What the Go packages promise"), checked by name
// over the module's Go files (go/parser; a name is found by how it is written: `pkg.Name` in
// a file that imports pkg, `Name` inside pkg). Methods and fields are not counted: a method is
// used through interfaces and values whose types a parser does not see.

// goFile is one parsed Go file of the module.
type goFile struct {
	path string // relative to the root
	dir  string // the package's folder relative to the root, e.g. "checks", "internal/gh"
	test bool   // a _test.go file
	f    *ast.File
	fset *token.FileSet // f's positions
	src  []byte
}

// testOnlyPackages exist for the tests of other packages (docs/architecture.md): what they
// export is used by tests alone by design.
var testOnlyPackages = []string{"internal/githubfake", "internal/golden", "internal/media/mediatest"}

// parseModule parses every Go file of fsys, the module's root, leaving out testdata and
// bench/nvml-ctick (a module of its own).
func parseModule(fsys fs.FS) ([]goFile, error) {
	var out []goFile
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (p == ".git" || p == "bench/nvml-ctick" || d.Name() == "testdata") {
			return fs.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parsing %s: %w", p, err)
		}
		out = append(out, goFile{p, path.Dir(p), strings.HasSuffix(p, "_test.go"), f, fset, src})
		return nil
	})
	return out, err
}

// export is one exported top-level name of a package and who uses it.
type export struct {
	dir, name, kind string // kind: func, type, var, const
	// uses by where they are: the package's own code, other packages' code, tests (any).
	inside, outside, tests int
	// inSignature: a type that appears in an exported declaration of its package (a
	// function's parameters or results, an exported field, a typed value), so that it
	// stays exported with it.
	inSignature bool
}

// exports lists the exported top-level names of the module's non-test code and counts their
// uses.
func exports(module string, files []goFile) map[[2]string]*export {
	out := map[[2]string]*export{}
	for _, fl := range files {
		if fl.test {
			continue
		}
		for _, d := range fl.f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					out[[2]string{fl.dir, d.Name.Name}] = &export{dir: fl.dir, name: d.Name.Name, kind: "func"}
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							out[[2]string{fl.dir, s.Name.Name}] = &export{dir: fl.dir, name: s.Name.Name, kind: "type"}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								out[[2]string{fl.dir, n.Name}] = &export{dir: fl.dir, name: n.Name, kind: d.Tok.String()}
							}
						}
					}
				}
			}
		}
	}
	for _, fl := range files {
		if !fl.test {
			markSignatures(fl, out)
		}
		countUses(module, fl, out)
	}
	return out
}

// markSignatures marks the types named in the exported declarations of one file.
func markSignatures(fl goFile, out map[[2]string]*export) {
	mark := func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				if e := out[[2]string{fl.dir, id.Name}]; e != nil && e.kind == "type" {
					e.inSignature = true
				}
			}
			return true
		})
	}
	for _, d := range fl.f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() {
				mark(d.Type)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					st, ok := s.Type.(*ast.StructType)
					if !ok {
						mark(s.Type)
						continue
					}
					for _, f := range st.Fields.List {
						if len(f.Names) == 0 || slices.ContainsFunc(f.Names, (*ast.Ident).IsExported) {
							mark(f.Type)
						}
					}
				case *ast.ValueSpec:
					if s.Type != nil && slices.ContainsFunc(s.Names, (*ast.Ident).IsExported) {
						mark(s.Type)
					}
				}
			}
		}
	}
}

// countUses counts the uses of out's names in one file.
func countUses(module string, fl goFile, out map[[2]string]*export) {
	imports := map[string]string{} // the name a package is imported as → its folder
	for _, im := range fl.f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		dir, ok := strings.CutPrefix(p, module+"/")
		if !ok {
			continue
		}
		name := path.Base(dir)
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = dir
	}
	declared := map[*ast.Ident]bool{}
	for _, d := range fl.f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			declared[d.Name] = true
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					declared[s.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						declared[n] = true
					}
				}
			}
		}
	}
	external := strings.HasSuffix(fl.f.Name.Name, "_test") // package x_test sees x only by import
	use := func(e *export) {
		switch {
		case fl.test:
			e.tests++
		case e.dir == fl.dir:
			e.inside++
		default:
			e.outside++
		}
	}
	selected := map[*ast.Ident]bool{}
	ast.Inspect(fl.f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			selected[n.Sel] = true // a field, a method or a package's name: not a bare use
			if x, ok := n.X.(*ast.Ident); ok {
				if dir, ok := imports[x.Name]; ok {
					if e := out[[2]string{dir, n.Sel.Name}]; e != nil {
						use(e)
					}
				}
			}
		case *ast.Ident:
			if selected[n] || declared[n] || external {
				return true
			}
			if e := out[[2]string{fl.dir, n.Name}]; e != nil {
				use(e)
			}
		}
		return true
	})
}

// closedSets are the module's closed sets of constants, each by a name: the constants of
// one named type in a package ("checks.Direction") and the check names, the constants that
// name an entry of checks' kinds registry (the results.json contract).
func closedSets(files []goFile) map[string][]string {
	sets := map[string][]string{}
	for _, fl := range files {
		if fl.test {
			continue
		}
		for _, d := range fl.f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			typ := ""
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				if vs.Type != nil {
					typ = ""
					if id, ok := vs.Type.(*ast.Ident); ok {
						typ = id.Name
					}
				} else if len(vs.Values) > 0 {
					typ = "" // an untyped value starts over; an implicit repetition keeps the type
				}
				if typ == "" {
					continue
				}
				for _, n := range vs.Names {
					if n.Name != "_" {
						k := fl.dir + "." + typ
						sets[k] = append(sets[k], n.Name)
					}
				}
			}
		}
		if fl.dir != "checks" {
			continue
		}
		ast.Inspect(fl.f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "kinds" || len(vs.Values) != 1 {
				return true
			}
			for _, elt := range vs.Values[0].(*ast.CompositeLit).Elts {
				for _, kv := range elt.(*ast.CompositeLit).Elts {
					if kv, ok := kv.(*ast.KeyValueExpr); ok && kv.Key.(*ast.Ident).Name == "Name" {
						if id, ok := kv.Value.(*ast.Ident); ok {
							sets["check names"] = append(sets["check names"], id.Name)
						}
					}
				}
			}
			return false
		})
	}
	return sets
}

// loadModule parses the module of the test's working folder.
func loadModule(t *testing.T) (module string, files []goFile) {
	t.Helper()
	var mod struct{ Path, Dir string }
	if err := json.Unmarshal(run(t, "", nil, "list", "-m", "-json"), &mod); err != nil {
		t.Fatalf("decoding go list -m: %v", err)
	}
	files, err := parseModule(os.DirFS(mod.Dir))
	if err != nil {
		t.Fatalf("reading the module: %v", err)
	}
	return mod.Path, files
}

// TestClosedSetsExportedAsOne: a closed set (an enum's constants, the check names) is
// exported or unexported as a whole, whatever each member's users are, so that a reader sees
// one vocabulary (`checks.LowerIsBetter` beside `checks.HigherIsBetter`).
func TestClosedSetsExportedAsOne(t *testing.T) {
	_, files := loadModule(t)
	sets := closedSets(files)
	for name, members := range sets {
		exported := slices.DeleteFunc(slices.Clone(members), func(m string) bool { return !ast.IsExported(m) })
		if len(exported) != 0 && len(exported) != len(members) {
			var lower []string
			for _, m := range members {
				if !ast.IsExported(m) {
					lower = append(lower, m)
				}
			}
			t.Errorf("%s: %d of %d members exported; unexported: %s", name, len(exported), len(members), strings.Join(lower, ", "))
		}
	}
	// Guard the guard.
	if n := len(sets["check names"]); n < 30 {
		t.Errorf("only %d check names found in checks' kinds: is the reader broken?", n)
	}
	if len(sets["checks.Direction"]) != 2 {
		t.Errorf("checks.Direction has %v, want its two constants", sets["checks.Direction"])
	}
}

// forTests are the exported names that other packages' tests use by design, with why; a
// name here is no twin of what the code uses.
var forTests = map[string]string{
	"internal/kernel.Supported": "the kernel tests of internal/metrics, internal/media and internal/compare run every level the CPU has",
	"internal/schema.FromType":  "docs/schemas/ is written by a test (cmd/diffusion-check TestSchemasAreGenerated, -update-schemas)",
	"results.ReadRequests": "the tests of cmd/diffusion-check and runner read a run's requests.jsonl line by line, revised and confirm " +
		"lines included, which the code only reads merged into cases (results.ReadAll)",
	"suite.JSONSchema": "docs/schemas/ is written by a test (cmd/diffusion-check TestSchemasAreGenerated, -update-schemas)",
}

// pendingTestOnly are test-only exports left for work under way elsewhere, each with the reason
// (empty now): an entry that is no longer a test-only export fails TestNoTestOnlyExports, so the
// list cannot outlive its reasons.
var pendingTestOnly = map[string]string{}

// TestNoTestOnlyExports: no exported name is used by tests alone (a twin of what the code
// uses, kept for its tests), except in the packages that exist for tests, the members of a
// closed set (exported as one) and the names of forTests.
func TestNoTestOnlyExports(t *testing.T) {
	module, files := loadModule(t)
	inSet := closedSetMembers(files)
	var found []string
	pending := map[string]bool{}
	for _, e := range exports(module, files) {
		k := e.dir + "." + e.name
		if e.inside+e.outside > 0 || slices.Contains(testOnlyPackages, e.dir) || forTests[k] != "" || e.kind == "const" && inSet[k] {
			continue
		}
		if pendingTestOnly[k] != "" {
			t.Logf("%s: used by tests only, left for now: %s", k, pendingTestOnly[k])
			pending[k] = true
			continue
		}
		found = append(found, fmt.Sprintf("%s (%s) is used by tests only (%d uses): unexport it, or have the tests use what the code uses", k, e.kind, e.tests))
	}
	for k, why := range pendingTestOnly {
		if !pending[k] {
			found = append(found, fmt.Sprintf("%s is in pendingTestOnly (%s) but is no longer a test-only export: delete the entry", k, why))
		}
	}
	slices.Sort(found)
	for _, f := range found {
		t.Error(f)
	}
}

// TestExportsHaveUsersOutside: outside internal/, a name is exported only when another
// package (its code or its tests) uses it, or it is a type of an exported declaration, or a
// member of a closed set that is exported.
func TestExportsHaveUsersOutside(t *testing.T) {
	module, files := loadModule(t)
	inSet := closedSetMembers(files)
	all := exports(module, files)
	outsideTests := outsideTestUses(module, files, all)
	var found []string
	for k, e := range all {
		if strings.HasPrefix(e.dir, "internal/") || e.dir == "cmd/diffusion-check" || strings.HasPrefix(e.dir, "bench/") {
			continue
		}
		if e.outside > 0 || outsideTests[k] > 0 || e.inSignature || e.kind == "const" && inSet[e.dir+"."+e.name] {
			continue
		}
		found = append(found, fmt.Sprintf("%s.%s (%s) has no user outside its package: unexport it", e.dir, e.name, e.kind))
	}
	slices.Sort(found)
	for _, f := range found {
		t.Error(f)
	}
}

// closedSetMembers holds "dir.Name" for every member of a closed set.
func closedSetMembers(files []goFile) map[string]bool {
	in := map[string]bool{}
	for set, members := range closedSets(files) {
		dir, _, _ := strings.Cut(set, ".")
		if set == "check names" {
			dir = "checks"
		}
		for _, m := range members {
			in[dir+"."+m] = true
		}
	}
	return in
}

// outsideTestUses counts the uses of each name by the tests of other packages.
func outsideTestUses(module string, files []goFile, all map[[2]string]*export) map[[2]string]int {
	n := map[[2]string]int{}
	for _, fl := range files {
		if !fl.test {
			continue
		}
		imports := map[string]string{}
		for _, im := range fl.f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if dir, ok := strings.CutPrefix(p, module+"/"); ok {
				name := path.Base(dir)
				if im.Name != nil {
					name = im.Name.Name
				}
				imports[name] = dir
			}
		}
		ast.Inspect(fl.f, func(node ast.Node) bool {
			if sel, ok := node.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok {
					if dir, ok := imports[x.Name]; ok && dir != fl.dir {
						if _, ok := all[[2]string{dir, sel.Sel.Name}]; ok {
							n[[2]string{dir, sel.Sel.Name}]++
						}
					}
				}
			}
			return true
		})
	}
	return n
}

// checkNameValues returns the check names (the values of the constants that name an entry of
// checks' kinds registry).
func checkNameValues(files []goFile) []string {
	values := map[string]string{}
	for _, fl := range files {
		if fl.dir != "checks" || fl.test {
			continue
		}
		ast.Inspect(fl.f, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok {
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							values[name.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			}
			return true
		})
	}
	var out []string
	for _, c := range closedSets(files)["check names"] {
		out = append(out, values[c])
	}
	return out
}

// TestRenderersSpellNoCheckName: the renderers (package report) ask checks.KindOf; no check
// name is spelled in report's code (its tests may), so renaming a check cannot silently break
// a report.
func TestRenderersSpellNoCheckName(t *testing.T) {
	_, files := loadModule(t)
	names := checkNameValues(files)
	if len(names) < 30 {
		t.Fatalf("only %d check names found: is the reader broken?", len(names))
	}
	for _, fl := range files {
		if fl.dir != "report" || fl.test {
			continue
		}
		ast.Inspect(fl.f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, name := range names {
				if strings.Contains(name, ".") && strings.Contains(s, name) {
					t.Errorf("%s: the check name %q is spelled in %s; ask checks.KindOf", fl.path, name, lit.Value)
				}
			}
			return true
		})
	}
}

// TestExportRulesOnAMadeUpModule shows what the readers count, on a small module: uses inside
// and outside a package and by tests, types of exported signatures, closed sets (an enum's
// constants, the check names of checks' kinds).
func TestExportRulesOnAMadeUpModule(t *testing.T) {
	const m = "example.com/m"
	fsys := fstest.MapFS{
		"checks/kinds.go": {Data: []byte(`package checks
type Direction int
const (
	lowerIsBetter Direction = iota
	HigherIsBetter
)
const PerfE2E = "perf.e2e"
const perfScenario = "perf.scenario"
type Kind struct{ Name string }
var kinds = []Kind{{Name: PerfE2E}, {Name: perfScenario}}
func KindOf(name string) Kind { return Kind{Name: name} }
func ApplyKnown() {}
func helper() { _ = HigherIsBetter }
`)},
		"checks/kinds_test.go": {Data: []byte("package checks\nfunc use() { ApplyKnown() }\n")},
		"report/report.go": {Data: []byte(`package report
import "example.com/m/checks"
func Render() string { return checks.KindOf("x").Name }
`)},
		"report/report_test.go": {Data: []byte("package report\nimport \"example.com/m/checks\"\nvar _ = checks.PerfE2E\n")},
	}
	files, err := parseModule(fsys)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][4]any{}
	for _, e := range exports(m, files) {
		got[e.dir+"."+e.name] = [4]any{e.inside, e.outside, e.tests, e.inSignature}
	}
	want := map[string][4]any{
		"checks.HigherIsBetter": {1, 0, 0, false},
		"checks.PerfE2E":        {1, 0, 1, false}, // kinds, and report's test
		"checks.Direction":      {1, 0, 0, false},
		"checks.Kind":           {3, 0, 0, true}, // KindOf returns it
		"checks.KindOf":         {0, 1, 0, false},
		"checks.ApplyKnown":     {0, 0, 1, false}, // a test-only export
		"report.Render":         {0, 0, 0, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exports (-want +got):\n%s", diff)
	}
	sets := closedSets(files)
	wantSets := map[string][]string{
		"checks.Direction": {"lowerIsBetter", "HigherIsBetter"}, // mixed: TestClosedSetsExportedAsOne fails on it
		"check names":      {"PerfE2E", "perfScenario"},
	}
	if diff := cmp.Diff(wantSets, sets); diff != "" {
		t.Errorf("closed sets (-want +got):\n%s", diff)
	}
}
