package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pkg is the part of `go list -json` that the rules read.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Error      *struct{ Err string }
	DepsErrors []*struct{ Err string }
}

// graph is the import graph of the module's packages and everything they depend on.
type graph struct {
	module string         // the module path, e.g. github.com/diffusion-check/diffusion-check
	pkgs   map[string]pkg // by import path, standard library included
	own    []string       // the module's own packages, sorted
}

// Rules a verdict package must keep: package checks judges numbers; measuring, files,
// networks and processes belong to the packages that feed it.
var (
	checksNoDeps    = []string{"os/exec"}
	checksNoImports = []string{"os", "os/exec", "net", "net/http", "syscall"}
	// highLevel are the module's packages that nothing under internal/ may depend on: each
	// of them, and every package below it.
	highLevel = []string{"runner", "report", "publish", "cmd", "suite", "plan", "selection", "history"}
	// executorImporters are the only packages that may import the executor (runner): the
	// suite, the plan, the selection and the results are data every other package reads
	// without running anything.
	executorImporters = []string{"cmd/diffusion-check"}
	// judgeNoImports: package judge decides which verdicts apply to a measured request; the
	// runner measures and loads the files, so judge imports what checks may not.
	judgeNoImports = checksNoImports
	// reportPath are the packages the report command reads results with: they never depend
	// on the executor (runner itself; its suite package is data).
	reportPath = []string{"report", "results"}
	// reportNoDeps: report renders; GitHub's API is internal/gh's, wired in cmd.
	reportNoDeps = []string{"net/http", "github.com/google/go-github/v66/github", "golang.org/x/oauth2"}
)

// violations returns every broken import rule of g, each naming the package and the chain
// of imports that breaks it.
func violations(g graph) []string {
	var out []string
	checks := g.module + "/checks"
	if p, ok := g.pkgs[checks]; ok {
		for _, bad := range checksNoImports {
			if slices.Contains(p.Imports, bad) {
				out = append(out, fmt.Sprintf("%s imports %s: the verdict package does no I/O and starts no process", rel(g, checks), bad))
			}
		}
		for _, bad := range checksNoDeps {
			if slices.Contains(p.Deps, bad) {
				out = append(out, fmt.Sprintf("%s depends on %s (%s)", rel(g, checks), bad, chain(g, checks, func(s string) bool { return s == bad })))
			}
		}
	} else {
		out = append(out, fmt.Sprintf("package %s not found: the rules about it would pass unchecked", checks))
	}
	report := g.module + "/report"
	for _, bad := range reportNoDeps {
		if slices.Contains(g.pkgs[report].Deps, bad) {
			out = append(out, fmt.Sprintf("%s depends on %s (%s): report renders, internal/gh talks to GitHub",
				rel(g, report), bad, chain(g, report, func(s string) bool { return s == bad })))
		}
	}
	isHigh := func(s string) bool {
		for _, h := range highLevel {
			if hp := g.module + "/" + h; s == hp || strings.HasPrefix(s, hp+"/") {
				return true
			}
		}
		return false
	}
	internal := g.module + "/internal/"
	for _, path := range g.own {
		if !strings.HasPrefix(path, internal) {
			continue
		}
		if slices.ContainsFunc(g.pkgs[path].Deps, isHigh) {
			out = append(out, fmt.Sprintf("%s depends on a high-level package (%s): shared types go below both sides", rel(g, path), chain(g, path, isHigh)))
		}
	}
	return append(out, judgeAndReportViolations(g)...)
}

// judgeAndReportViolations are the rules of the judge and of the report path, for the
// packages of g that exist (a graph without them has nothing to break).
func judgeAndReportViolations(g graph) []string {
	var out []string
	judge := g.module + "/judge"
	for _, bad := range judgeNoImports {
		if slices.Contains(g.pkgs[judge].Imports, bad) {
			out = append(out, fmt.Sprintf("%s imports %s: the judge does no I/O and starts no process", rel(g, judge), bad))
		}
	}
	executor := g.module + "/runner"
	for _, path := range g.own {
		if path == executor || slices.Contains(executorImporters, rel(g, path)) {
			continue
		}
		if slices.Contains(g.pkgs[path].Imports, executor) {
			out = append(out, fmt.Sprintf("%s imports runner: only cmd wires the executor in", rel(g, path)))
		}
	}
	for _, p := range reportPath {
		path := g.module + "/" + p
		if slices.Contains(g.pkgs[path].Deps, executor) {
			out = append(out, fmt.Sprintf("%s depends on the executor (%s): the report path reads results without it",
				p, chain(g, path, func(s string) bool { return s == executor })))
		}
	}
	return out
}

// chain returns the shortest import path from one package to the first package that target
// accepts, e.g. "internal/gpumem → runner", or "" when there is none.
func chain(g graph, from string, target func(string) bool) string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, next := range g.pkgs[cur].Imports {
			if _, seen := prev[next]; seen {
				continue
			}
			prev[next] = cur
			if target(next) {
				var steps []string
				for s := next; s != ""; s = prev[s] {
					steps = append(steps, rel(g, s))
				}
				slices.Reverse(steps)
				return strings.Join(steps, " → ")
			}
			queue = append(queue, next)
		}
	}
	return ""
}

// rel shortens a package of the module to its path inside the module.
func rel(g graph, path string) string {
	if r, ok := strings.CutPrefix(path, g.module+"/"); ok {
		return r
	}
	return path
}

// goList loads the module's import graph as the go command sees it under extra environment
// settings (e.g. CGO_ENABLED=0), failing the test on a package that does not load.
func goList(t *testing.T, env ...string) graph {
	t.Helper()
	var mod struct{ Path, Dir string }
	if err := json.Unmarshal(run(t, "", env, "list", "-m", "-json"), &mod); err != nil {
		t.Fatalf("decoding go list -m: %v", err)
	}
	g := graph{module: mod.Path, pkgs: map[string]pkg{}}
	dec := json.NewDecoder(bytes.NewReader(run(t, mod.Dir, env, "list", "-e", "-deps",
		"-json=ImportPath,Imports,Deps,Error,DepsErrors,Module", "./...")))
	for {
		var p struct {
			pkg
			Module *struct{ Path string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list -deps (%s): %v", strings.Join(env, " "), err)
		}
		if p.Error != nil {
			t.Errorf("%s (%s): %s", p.ImportPath, strings.Join(env, " "), p.Error.Err)
		}
		g.pkgs[p.ImportPath] = p.pkg
		if p.Module != nil && p.Module.Path == mod.Path {
			g.own = append(g.own, p.ImportPath)
		}
	}
	slices.Sort(g.own)
	if len(g.own) == 0 {
		t.Fatalf("go list found no package of module %s", mod.Path)
	}
	return g
}

// run runs the go command (go test puts its own first on PATH) and returns its stdout.
func run(t *testing.T, dir string, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s (%s): %v\n%s", strings.Join(args, " "), strings.Join(env, " "), err, stderr.Bytes())
	}
	return out
}

// TestImportRules checks the module's real import graph, with cgo on and off (the files and
// so the imports differ: NVML is linked only with cgo), against the rules of
// docs/architecture.md.
func TestImportRules(t *testing.T) {
	for _, cgo := range []string{"0", "1"} {
		t.Run("cgo"+cgo, func(t *testing.T) {
			g := goList(t, "CGO_ENABLED="+cgo)
			for _, v := range violations(g) {
				t.Error(v)
			}
			// Guard the guard: a rename that moved every package out of reach of the rules
			// would make them pass vacuously.
			for _, want := range []string{"checks", "judge", "runner", "report", "results", "internal/gpumem", "internal/compare"} {
				if _, ok := g.pkgs[g.module+"/"+want]; !ok {
					t.Errorf("package %s not listed: update the rules and docs/architecture.md", want)
				}
			}
		})
	}
}

// TestViolations shows that each rule catches what it forbids, directly and through another
// package, on small made-up graphs.
func TestViolations(t *testing.T) {
	const m = "example.com/m"
	mk := func(edges map[string][]string) graph {
		g := graph{module: m, pkgs: map[string]pkg{}}
		var deps func(p string, seen map[string]bool)
		deps = func(p string, seen map[string]bool) {
			for _, i := range edges[p] {
				if !seen[i] {
					seen[i] = true
					deps(i, seen)
				}
			}
		}
		for p, imps := range edges {
			seen := map[string]bool{}
			deps(p, seen)
			var d []string
			for s := range seen {
				d = append(d, s)
			}
			slices.Sort(d)
			g.pkgs[p] = pkg{ImportPath: p, Imports: imps, Deps: d}
			if strings.HasPrefix(p, m+"/") {
				g.own = append(g.own, p)
			}
		}
		slices.Sort(g.own)
		return g
	}
	for _, tc := range []struct {
		name  string
		edges map[string][]string
		want  []string
	}{
		{
			name: "clean",
			edges: map[string][]string{
				m + "/checks":          {"fmt"},
				m + "/runner":          {m + "/checks", m + "/internal/proc"},
				m + "/internal/proc":   {"os/exec"},
				m + "/internal/gpumem": {m + "/internal/memory"},
				m + "/internal/memory": nil,
				"os/exec":              {"os"},
			},
		},
		{
			name: "checks reaches os/exec through an internal package",
			edges: map[string][]string{
				m + "/checks":        {m + "/internal/proc"},
				m + "/internal/proc": {"os/exec"},
				"os/exec":            {"os"},
			},
			want: []string{"checks depends on os/exec (checks → internal/proc → os/exec)"},
		},
		{
			name: "report reaches GitHub's API through a helper",
			edges: map[string][]string{
				m + "/checks":                            nil,
				m + "/report":                            {m + "/checks", m + "/internal/gh"},
				m + "/internal/gh":                       {"github.com/google/go-github/v66/github"},
				"github.com/google/go-github/v66/github": {"net/http"},
			},
			want: []string{
				"report depends on net/http (report → internal/gh → github.com/google/go-github/v66/github → net/http): report renders, internal/gh talks to GitHub",
				"report depends on github.com/google/go-github/v66/github (report → internal/gh → github.com/google/go-github/v66/github): " +
					"report renders, internal/gh talks to GitHub",
			},
		},
		{
			name:  "checks opens files",
			edges: map[string][]string{m + "/checks": {"os"}},
			want:  []string{"checks imports os: the verdict package does no I/O and starts no process"},
		},
		{
			name: "internal imports runner directly and report indirectly",
			edges: map[string][]string{
				m + "/checks":            nil,
				m + "/internal/gpumem":   {m + "/runner"},
				m + "/internal/compare":  {m + "/internal/pictures"},
				m + "/internal/pictures": {m + "/report"},
				m + "/runner":            {m + "/checks"},
				m + "/report":            {m + "/checks"},
			},
			want: []string{
				"internal/compare depends on a high-level package (internal/compare → internal/pictures → report): shared types go below both sides",
				"internal/gpumem depends on a high-level package (internal/gpumem → runner): shared types go below both sides",
				"internal/pictures depends on a high-level package (internal/pictures → report): shared types go below both sides",
				"internal/gpumem imports runner: only cmd wires the executor in",
			},
		},
		{
			name: "a package below runner counts as runner",
			edges: map[string][]string{
				m + "/checks":         nil,
				m + "/internal/fault": {m + "/runner/server"},
				m + "/runner/server":  nil,
			},
			want: []string{"internal/fault depends on a high-level package (internal/fault → runner/server): shared types go below both sides"},
		},
		{
			name: "the suite is data: a package under internal/ may not read it",
			edges: map[string][]string{
				m + "/checks":         nil,
				m + "/internal/fault": {m + "/suite"},
				m + "/suite":          nil,
			},
			want: []string{"internal/fault depends on a high-level package (internal/fault → suite): shared types go below both sides"},
		},
		{
			name: "only cmd imports the executor",
			edges: map[string][]string{
				m + "/checks":              nil,
				m + "/runner":              {m + "/checks"},
				m + "/plan":                {m + "/runner"},
				m + "/cmd/diffusion-check": {m + "/runner", m + "/plan"},
			},
			want: []string{"plan imports runner: only cmd wires the executor in"},
		},
		{
			name: "the judge opens files, and the report path reaches the executor",
			edges: map[string][]string{
				m + "/checks":  nil,
				m + "/judge":   {m + "/checks", "os"},
				m + "/results": {m + "/runner"},
				m + "/report":  {m + "/results"},
				m + "/runner":  {m + "/judge"},
			},
			want: []string{
				"judge imports os: the judge does no I/O and starts no process",
				"results imports runner: only cmd wires the executor in",
				"report depends on the executor (report → results → runner): the report path reads results without it",
				"results depends on the executor (results → runner): the report path reads results without it",
			},
		},
		{
			name:  "no checks package",
			edges: map[string][]string{m + "/verdicts": nil},
			want:  []string{"package example.com/m/checks not found: the rules about it would pass unchecked"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, violations(mk(tc.edges))); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDocumentedGraph keeps the diagram of docs/architecture.md true: its Mermaid flowchart
// and its plain-text fallback must each list exactly the module's import edges.
func TestDocumentedGraph(t *testing.T) {
	const doc = "../../docs/architecture.md"
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	g := goList(t)
	var want []string
	for _, p := range g.own {
		for _, i := range g.pkgs[p].Imports {
			if slices.Contains(g.own, i) {
				want = append(want, rel(g, p)+" -> "+rel(g, i))
			}
		}
	}
	slices.Sort(want)
	mermaid, text, err := documentedEdges(string(b))
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	for _, d := range []struct {
		what string
		got  []string
	}{{"Mermaid flowchart", mermaid}, {"plain-text graph", text}} {
		if diff := cmp.Diff(want, d.got); diff != "" {
			t.Errorf("%s: the %s is not the import graph (-real +documented):\n%s", doc, d.what, diff)
		}
	}
}

// documentedEdges reads the edges "a -> b" of the first ```mermaid block of an architecture
// document (node ids map to their quoted labels) and of the plain-text block after it ("a → b,
// c" with indented continuation lines; "→ nothing of the module" lists leaves), both sorted.
func documentedEdges(doc string) (mermaid, text []string, err error) {
	_, rest, ok := strings.Cut(doc, "```mermaid\n")
	if !ok {
		return nil, nil, errors.New("no ```mermaid block")
	}
	flow, rest, ok := strings.Cut(rest, "\n```")
	if !ok {
		return nil, nil, errors.New("the ```mermaid block does not end")
	}
	labels := map[string]string{}
	node := func(s string) string {
		id, label, ok := strings.Cut(strings.TrimSpace(s), "[")
		if ok {
			labels[id] = strings.Trim(label, `"]`)
		}
		return id
	}
	var ids [][2]string
	for line := range strings.Lines(flow) {
		if from, to, ok := strings.Cut(line, "-->"); ok {
			ids = append(ids, [2]string{node(from), node(to)})
		} else if strings.Contains(line, "[") {
			node(line)
		}
	}
	label := func(id string) string {
		if l, ok := labels[id]; ok {
			return l
		}
		return id
	}
	for _, e := range ids {
		mermaid = append(mermaid, label(e[0])+" -> "+label(e[1]))
	}
	_, rest, ok = strings.Cut(rest, "```\n")
	if !ok {
		return nil, nil, errors.New("no plain-text block after the Mermaid flowchart")
	}
	plain, _, _ := strings.Cut(rest, "```")
	var joined []string
	for line := range strings.Lines(plain) {
		if strings.HasPrefix(line, " ") && len(joined) > 0 {
			joined[len(joined)-1] += " " + strings.TrimSpace(line)
		} else if strings.TrimSpace(line) != "" {
			joined = append(joined, strings.TrimSpace(line))
		}
	}
	for _, line := range joined {
		from, to, ok := strings.Cut(line, "→")
		if !ok {
			return nil, nil, fmt.Errorf("plain-text graph line %q has no →", line)
		}
		if strings.TrimSpace(to) == "nothing of the module" {
			continue
		}
		for _, d := range strings.Split(to, ",") {
			text = append(text, strings.TrimSpace(from)+" -> "+strings.TrimSpace(d))
		}
	}
	slices.Sort(mermaid)
	slices.Sort(text)
	return mermaid, text, nil
}
