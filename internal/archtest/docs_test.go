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
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// The docs name code in backquotes: `checks.KindOf`, `Cache.Forget`, `runner/request.go`,
// `casePerf`. TestDocsNameLiveCode resolves every such name of README.md and docs/*.md against
// the module's Go files and its tree, so that a rename or a removal fails `go test` instead of
// leaving the docs pointing at code that is gone.
//
// The docs also quote SGLang (its Python files, classes and functions), JSON and YAML keys and
// check names, so a backquoted span is resolved only when it is written as our code is written;
// everything else is left alone. The rule, span by span (after dropping a leading `./`, a
// trailing `()` and a trailing `/...`):
//
//   - A path: a span with a `/` whose first element is a top-level folder of this
//     repository (`runner/request.go`, `internal/gh`, `docs/schemas/`), or a module import
//     path, must exist. SGLang's paths (`openai/protocol.py`, `python/sglang/…`) start with
//     folders we do not have.
//   - A Go or testscript file (`kinds.go`, `hang.txtar`) without a folder must exist somewhere
//     in the tree; with a folder it may also be a tail of a path (`media/probe.go`). There is no
//     Go in SGLang. Other bare file names (`server_args.py`, `results.json`) are not resolved.
//   - A selector `a.b` or `a.b.c` made of identifiers without `_` (snake_case is Python's and
//     JSON's, never Go's):
//   - a is one of our package names: b must be declared at the top level of such a package,
//     c (if any) must be a field or method of type b. A lowercase one-word b that the
//     package does not declare is left alone when the span is data: the value of a string
//     constant (a check name such as `memory.sampler`) or a path of struct-tag keys (a plan's
//     `selection.all`).
//   - a is a type of ours (`Cache.Forget`, `run.perf`): b must be a field (embedded ones
//     included) or a method of a type of that name.
//   - a is declared by us but not as a type (`PerfRecord`, a constant): unresolved.
//   - a is written as only Go writes names, mixedCaps starting lowercase (`perfConfig`), but
//     is declared nowhere: unresolved.
//   - anything else (`os.Getenv`, `json.dump`, SGLang's `ServerArgs.from_cli_args`) is not
//     ours and is left alone.
//   - A lone identifier in mixedCaps starting lowercase (`casePerf`) or a test function
//     (`TestX`, `BenchmarkX`, `FuzzX`, `ExampleX`) must be declared somewhere in the module:
//     Python names its functions in snake_case.
//
// Go names are read with go/parser from every .go file of the module, test files and every
// build variant included (a name in a cgo-only file is as alive as any), so the test needs no
// module beyond the standard library.

// code is what docs may name: the module's Go declarations and its tree of files.
type code struct {
	module string
	// files and dirs are the tree's paths relative to the root, slash-separated; top holds
	// the top-level folders, the first elements a path of ours can have.
	files, dirs, top map[string]bool
	// pkgs maps a package name to the top-level names declared in packages of that name
	// (there may be several: every main package is "main").
	pkgs map[string]map[string]bool
	// pkgTypes maps "pkg.Type" to the type's members; types maps "Type" to the members of
	// every type of that name in the module, embeds to the names of the types they embed.
	pkgTypes, types, embeds map[string]map[string]bool
	// decls is every name declared anywhere: top-level, methods, fields.
	decls map[string]bool
	// data is what a span may name that is not code: the string literals of the code (check
	// names, suite keys); keys holds those that are one identifier and the struct-tag keys
	// of the JSON and YAML the code reads and writes.
	data, keys map[string]bool
}

// loadCode reads the tree of fsys, the module's root, without .git, and the Go files in it
// that are not under testdata (whose Go files are fixtures, not the module's code).
func loadCode(fsys fs.FS, module string) (*code, error) {
	c := &code{
		module: module, files: map[string]bool{}, dirs: map[string]bool{}, top: map[string]bool{},
		pkgs: map[string]map[string]bool{}, pkgTypes: map[string]map[string]bool{},
		types: map[string]map[string]bool{}, embeds: map[string]map[string]bool{}, decls: map[string]bool{}, data: map[string]bool{},
		keys: map[string]bool{},
	}
	fset := token.NewFileSet()
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if p == ".git" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil // a worktree's .git is a file
		}
		if d.IsDir() && !strings.Contains(p, "/") {
			// Only a folder can begin a path: a top-level file (a binary `go build` left,
			// named diffusion-check) does not make `diffusion-check/results/v1` one of ours.
			c.top[p] = true
		}
		if d.IsDir() {
			c.dirs[p] = true
			return nil
		}
		c.files[p] = true
		if !strings.HasSuffix(p, ".go") || slices.Contains(strings.Split(p, "/"), "testdata") {
			return nil
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parsing %s: %w", p, err)
		}
		c.addFile(f, strings.HasSuffix(p, "_test.go"))
		return nil
	})
	return c, err
}

// addFile records the declarations of one Go file.
func (c *code) addFile(f *ast.File, test bool) {
	pkg := strings.TrimSuffix(f.Name.Name, "_test")
	if c.pkgs[pkg] == nil {
		c.pkgs[pkg] = map[string]bool{}
	}
	members := func(typ string) map[string]bool {
		if c.types[typ] == nil {
			c.types[typ] = map[string]bool{}
			c.embeds[typ] = map[string]bool{}
		}
		k := pkg + "." + typ
		if c.pkgTypes[k] == nil {
			c.pkgTypes[k] = map[string]bool{}
		}
		return c.pkgTypes[k]
	}
	addMember := func(typ, name string) {
		members(typ)[name] = true
		c.types[typ][name] = true
		c.decls[name] = true
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			c.decls[d.Name.Name] = true
			if d.Recv == nil {
				c.pkgs[pkg][d.Name.Name] = true
				continue
			}
			if recv := receiverType(d.Recv.List[0].Type); recv != "" {
				addMember(recv, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					c.pkgs[pkg][s.Name.Name] = true
					c.decls[s.Name.Name] = true
					members(s.Name.Name)
					named, embedded := typeMembers(s.Type)
					for _, m := range append(named, embedded...) {
						addMember(s.Name.Name, m)
					}
					for _, e := range embedded {
						c.embeds[s.Name.Name][e] = true
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						c.pkgs[pkg][n.Name] = true
						c.decls[n.Name] = true
					}
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && !test {
			if v, err := strconv.Unquote(lit.Value); err == nil {
				c.data[v] = true
				if ident.MatchString(v) {
					c.keys[v] = true
				}
			}
		}
		if field, ok := n.(*ast.Field); ok && field.Tag != nil {
			if tag, err := strconv.Unquote(field.Tag.Value); err == nil {
				for _, k := range []string{"json", "yaml"} {
					if name, _, _ := strings.Cut(reflect.StructTag(tag).Get(k), ","); name != "" && name != "-" {
						c.keys[name] = true
					}
				}
			}
		}
		return true
	})
}

// receiverType is the name of a method's receiver type: T for T, *T, T[P] and *T[P].
func receiverType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// typeMembers are the fields of a struct or the methods of an interface (named), and the
// types it embeds, by their names.
func typeMembers(e ast.Expr) (named, embedded []string) {
	var list *ast.FieldList
	switch t := e.(type) {
	case *ast.StructType:
		list = t.Fields
	case *ast.InterfaceType:
		list = t.Methods
	default:
		return nil, nil
	}
	for _, f := range list.List {
		for _, n := range f.Names {
			named = append(named, n.Name)
		}
		if len(f.Names) == 0 {
			if sel, ok := f.Type.(*ast.SelectorExpr); ok {
				embedded = append(embedded, sel.Sel.Name)
			} else if n := receiverType(f.Type); n != "" {
				embedded = append(embedded, n)
			}
		}
	}
	return named, embedded
}

// hasMember says whether a type of members ms, embedding the types embeds, has the field or
// method m, directly or through a type it embeds.
func (c *code) hasMember(ms, embeds map[string]bool, m string, depth int) bool {
	if ms[m] {
		return true
	}
	if depth > 4 { // embedding cycles through types of the same name in other packages
		return false
	}
	for e := range embeds {
		if c.types[e] != nil && c.hasMember(c.types[e], c.embeds[e], m, depth+1) {
			return true
		}
	}
	return false
}

var (
	ident    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	pathLike = regexp.MustCompile(`^[A-Za-z0-9_.\-/]+$`)
	testFunc = regexp.MustCompile(`^(Test|Benchmark|Fuzz|Example)[A-Z_0-9]`)
)

// fileExt are the extensions of the files the docs name (`results.json`, `suite.yaml`): a
// selector ending in one is a file name, not a member.
var fileExt = map[string]bool{
	"json": true, "jsonl": true, "yaml": true, "yml": true, "html": true, "md": true, "txt": true,
	"log": true, "mkv": true, "mp4": true, "png": true, "jpg": true, "webp": true, "wav": true,
	"py": true, "sh": true, "toml": true, "mod": true, "sum": true, "svg": true, "mjs": true,
}

// foreignPrefixes start the C functions the docs name (NVML's and CUDA's), which are written
// in mixedCaps as Go's are.
var foreignPrefixes = []string{"nvml", "cuda"}

// topLevel says whether some package of the module declares name at its top level.
func (c *code) topLevel(name string) bool {
	for _, decls := range c.pkgs {
		if decls[name] {
			return true
		}
	}
	return false
}

// lowerMixed says whether name is written as only Go writes names: lowercase first, an
// uppercase letter later, no underscore (`casePerf`, `perfConfig`).
func lowerMixed(name string) bool {
	return name != "" && unicode.IsLower(rune(name[0])) && !strings.Contains(name, "_") &&
		strings.IndexFunc(name, unicode.IsUpper) > 0
}

// resolve says why the backquoted span s names nothing in c, or returns "" when it names
// something there or is not ours to resolve (see the rule at the top of this file).
func (c *code) resolve(s string) string {
	s = strings.TrimPrefix(strings.TrimSuffix(strings.TrimSuffix(s, "()"), "/..."), "./")
	if s == "" || !pathLike.MatchString(s) {
		return ""
	}
	if strings.Contains(s, "/") || strings.HasSuffix(s, ".go") || strings.HasSuffix(s, ".txtar") {
		return c.resolvePath(s)
	}
	parts := strings.Split(s, ".")
	for _, p := range parts {
		if !ident.MatchString(p) || strings.Contains(p, "_") {
			return ""
		}
	}
	if len(parts) == 1 {
		foreign := slices.ContainsFunc(foreignPrefixes, func(p string) bool { return strings.HasPrefix(s, p) })
		if (lowerMixed(s) && !foreign || testFunc.MatchString(s)) && !c.decls[s] {
			return "declared nowhere in the module"
		}
		return ""
	}
	if len(parts) > 3 {
		return ""
	}
	a, b := parts[0], parts[1]
	if len(parts) == 2 && fileExt[b] {
		return ""
	}
	if decls, ok := c.pkgs[a]; ok && a != "main" {
		if !decls[b] {
			if unicode.IsLower(rune(b[0])) && !lowerMixed(b) && len(parts) == 2 && c.isData(parts) {
				return ""
			}
			return fmt.Sprintf("package %s declares no %s", a, b)
		}
		if len(parts) == 3 {
			ms, ok := c.pkgTypes[a+"."+b]
			if !ok {
				return fmt.Sprintf("%s.%s is not a type", a, b)
			}
			if !c.hasMember(ms, c.embeds[b], parts[2], 0) {
				return fmt.Sprintf("type %s.%s has no field or method %s", a, b, parts[2])
			}
		}
		return ""
	}
	if len(parts) == 3 || c.data[s] {
		return ""
	}
	if ms, ok := c.types[a]; ok {
		if !c.hasMember(ms, c.embeds[a], b, 0) {
			return fmt.Sprintf("no type %s has a field or method %s", a, b)
		}
		return ""
	}
	if unicode.IsUpper(rune(a[0])) && c.topLevel(a) {
		return fmt.Sprintf("%s is declared, but not as a type with members", a)
	}
	if lowerMixed(a) {
		return fmt.Sprintf("no type %s in the module", a)
	}
	return ""
}

// isData says whether a selector names data rather than code: a string literal of the code
// (a check name) or a path of keys.
func (c *code) isData(parts []string) bool {
	if c.data[strings.Join(parts, ".")] {
		return true
	}
	for _, p := range parts {
		if !c.keys[p] {
			return false
		}
	}
	return true
}

// resolvePath resolves a span with a slash or a Go or testscript file name.
func (c *code) resolvePath(s string) string {
	if rest, ok := strings.CutPrefix(s, c.module); ok {
		s = strings.TrimPrefix(rest, "/")
		if s == "" {
			return ""
		}
	} else if strings.Contains(s, "/") && !c.top[strings.SplitN(s, "/", 2)[0]] {
		return ""
	}
	clean := strings.TrimSuffix(s, "/")
	if c.files[clean] || c.dirs[clean] {
		return ""
	}
	if strings.HasSuffix(clean, ".go") || strings.HasSuffix(clean, ".txtar") {
		for f := range c.files {
			if strings.HasSuffix(f, "/"+clean) || path.Base(f) == clean && !strings.Contains(clean, "/") {
				return ""
			}
		}
	}
	return "no such file or folder in the repository"
}

// span is a backquoted stretch of a Markdown file.
type span struct {
	line int
	text string
}

// codeSpans returns the inline code spans of a Markdown document, leaving out fenced code
// blocks (shell sessions, diagrams, examples) and spans of two or more backquotes. A span may
// run over a line break; its line is where it starts.
func codeSpans(doc string) []span {
	lines := strings.Split(doc, "\n")
	var out []span
	fence := ""
	var para []string
	var paraStart int
	flush := func() {
		text := strings.Join(para, "\n")
		for i := 0; i < len(text); i++ {
			if text[i] != '`' {
				continue
			}
			n := 1
			for i+n < len(text) && text[i+n] == '`' {
				n++
			}
			tick := strings.Repeat("`", n)
			end := strings.Index(text[i+n:], tick)
			if end < 0 {
				i += n - 1
				continue
			}
			if n == 1 {
				line := paraStart + strings.Count(text[:i], "\n")
				out = append(out, span{line, strings.TrimSpace(strings.ReplaceAll(text[i+1:i+1+end], "\n", " "))})
			}
			i += n + end + n - 1
		}
		para = nil
	}
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			flush()
			fence = trimmed[:3]
			continue
		}
		if strings.TrimSpace(l) == "" {
			flush()
			continue
		}
		if para == nil {
			paraStart = i + 1
		}
		para = append(para, l)
	}
	flush()
	return out
}

// TestDocsNameLiveCode resolves every backquoted name of the README and docs/*.md (the rule
// is at the top of this file) and names each that resolves to nothing by file and line.
func TestDocsNameLiveCode(t *testing.T) {
	var mod struct{ Path, Dir string }
	if err := json.Unmarshal(run(t, "", nil, "list", "-m", "-json"), &mod); err != nil {
		t.Fatalf("decoding go list -m: %v", err)
	}
	fsys := os.DirFS(mod.Dir)
	c, err := loadCode(fsys, mod.Path)
	if err != nil {
		t.Fatalf("reading the module: %v", err)
	}
	docs, err := fs.Glob(fsys, "docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	docs = append([]string{"README.md"}, docs...)
	checked := 0
	for _, doc := range docs {
		b, err := fs.ReadFile(fsys, doc)
		if err != nil {
			t.Fatalf("reading %s: %v", doc, err)
		}
		for _, s := range codeSpans(string(b)) {
			checked++
			if why := c.resolve(s.text); why != "" {
				t.Errorf("%s:%d: `%s`: %s", doc, s.line, s.text, why)
			}
		}
	}
	// Guard the guard: a reader that found no span would pass vacuously.
	if checked < 1000 {
		t.Errorf("only %d backquoted spans in %d documents: is the Markdown reader broken?", checked, len(docs))
	}
}

// TestResolve shows the rule on a small made-up module: what resolves, what is not ours and
// what is dead.
func TestResolve(t *testing.T) {
	fsys := fstest.MapFS{
		"go.mod": {Data: []byte("module example.com/m\n")},
		"checks/perf.go": {Data: []byte(`package checks
const PerfRecord = "perf.record"
const MemorySampler = "memory.sampler"
type Check struct { Name string; Kind }
type Kind struct { Label string }
func (c Check) Note() string { return "" }
func perfLoadCheck() {}
func TestHelper() {}
`)},
		"plan/plan.go": {Data: []byte("package plan\ntype Plan struct { Selection Selection `json:\"selection\"` }\n" +
			"type Selection struct { All bool `json:\"all\"` }\n")},
		"internal/media/probe.go":                 {Data: []byte("package media\ntype run struct{ cmd string }\n")},
		"cmd/tool/main.go":                        {Data: []byte("package main\nfunc casePerf() {}\n")},
		"cmd/tool/testdata/script/hang.txtar":     {Data: []byte("")},
		"cmd/tool/testdata/fixture/dead.go":       {Data: []byte("package dead\nfunc gone() {}\n")},
		"docs/suite.md":                           {Data: []byte("")},
		"runner/run.go":                           {Data: []byte("package runner\nvar keys = []string{\"checks\", \"perf\"}\n")},
		"selection/select.go":                     {Data: []byte("package selection\nfunc Select() {}\n")},
		".git/config":                             {Data: []byte("")},
		"internal/media/testdata/notgo/broken.go": {Data: []byte("not go at all")},
	}
	c, err := loadCode(fsys, "example.com/m")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ span, want string }{
		// Ours and alive.
		{"checks.Check", ""},
		{"checks.Check.Note", ""},
		{"checks.Check.Label", ""}, // through the embedded Kind
		{"checks.perfLoadCheck()", ""},
		{"Check.Name", ""},
		{"run.cmd", ""},
		{"casePerf", ""},
		{"TestHelper", ""},
		{"internal/media/probe.go", ""},
		{"media/probe.go", ""},
		{"probe.go", ""},
		{"hang.txtar", ""},
		{"internal/media/", ""},
		{"./internal/...", ""},
		{"example.com/m/checks", ""},
		{"docs/suite.md", ""},
		// Data, not code.
		{"memory.sampler", ""},
		{"perf.record", ""},
		{"selection.all", ""},
		{"checks.perf", ""},
		{"suite.yaml", ""},
		{".git/config", ""},
		{"Selection.All", ""},
		// Not ours: SGLang's, Python's, the standard library's, prose.
		{"openai/protocol.py", ""},
		{"python/sglang/multimodal_gen/runtime/server_args.py", ""},
		{"server_args.py", ""},
		{"ServerArgs.from_cli_args", ""},
		{"SamplingParams.seed", ""},
		{"os.Getenv", ""},
		{"json.dump", ""},
		{"metrics.request_id", ""},
		{"checks.perf: false", ""},
		{"checks/<concern>.go", ""},
		{"a.b", ""},
		{"run_perf_check", ""},
		// Dead.
		{"checks.OverrideEnv", "package checks declares no OverrideEnv"},
		{"checks.ApplyKnown()", "package checks declares no ApplyKnown"},
		{"checks.Check.Gone", "type checks.Check has no field or method Gone"},
		{"checks.PerfRecord.X", "checks.PerfRecord is not a type"},
		{"PerfRecord.impossible", "PerfRecord is declared, but not as a type with members"},
		{"run.perf", "no type run has a field or method perf"},
		{"perfConfig.realtime", "no type perfConfig in the module"},
		{"casePerfGone", "declared nowhere in the module"},
		{"TestGone", "declared nowhere in the module"},
		{"gone", ""}, // one lowercase word is prose as often as code
		{"runner/perf.go", "no such file or folder in the repository"},
		{"checks/memory.go", "no such file or folder in the repository"},
		{"dead.go", ""}, // a fixture's file exists, though its Go is not the module's
		{"docs/gone.md", "no such file or folder in the repository"},
		{"example.com/m/gone", "no such file or folder in the repository"},
	} {
		if got := c.resolve(tc.span); got != tc.want {
			t.Errorf("resolve(%q) = %q, want %q", tc.span, got, tc.want)
		}
	}
}

// TestCodeSpans shows which backquoted stretches are read, and on which line.
func TestCodeSpans(t *testing.T) {
	doc := "# `Title`\n\ntext `a.B` and `c`\nover `two\nlines` end\n\n```go\n`fenced`\n```\n" +
		"   ~~~\n`tilde`\n   ~~~\n``double `tick` span`` and `after`\nan unclosed ` tick\n"
	want := []span{{1, "Title"}, {3, "a.B"}, {3, "c"}, {4, "two lines"}, {13, "after"}}
	if diff := cmp.Diff(want, codeSpans(doc), cmp.AllowUnexported(span{})); diff != "" {
		t.Errorf("codeSpans (-want +got):\n%s", diff)
	}
}

// TestPackageDocsInDocGo: a package's doc comment, what `go doc` prints first, is in its
// doc.go and nowhere else, so that it is found in one place and not left behind in a file
// whose code moved (report's once said it published to GitHub, long after that moved out).
func TestPackageDocsInDocGo(t *testing.T) {
	var mod struct{ Dir string }
	if err := json.Unmarshal(run(t, "", nil, "list", "-m", "-json"), &mod); err != nil {
		t.Fatalf("decoding go list -m: %v", err)
	}
	fsys := os.DirFS(mod.Dir)
	withDoc := map[string][]string{} // folder → its files with a package doc comment
	pkgs := map[string]bool{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (p == ".git" || d.Name() == "testdata") {
			return fs.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, src, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return fmt.Errorf("parsing %s: %w", p, err)
		}
		pkgs[path.Dir(p)] = true
		if f.Doc != nil {
			withDoc[path.Dir(p)] = append(withDoc[path.Dir(p)], path.Base(p))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the module: %v", err)
	}
	for dir := range pkgs {
		if got := withDoc[dir]; !slices.Equal(got, []string{"doc.go"}) {
			t.Errorf("%s: the package doc comment is in %v, want it in doc.go alone", dir, got)
		}
	}
	if len(pkgs) < 30 {
		t.Errorf("only %d packages found: is the walk broken?", len(pkgs))
	}
}
