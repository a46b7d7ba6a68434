package archtest

import (
	"bytes"
	"fmt"
	"go/ast"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// maxFuncLines is the longest a function may be, counted from its func line to its closing
// brace: past it a function reads as several. A table (a function with no
// branch: no if, for, switch or select outside the function literals it holds) may be
// longer, as a list is read a row at a time.
const maxFuncLines = 80

// longFuncsPending are the functions over maxFuncLines in code that other work was changing
// when this test was written: each is to be split there, and then deleted
// from this list.
var longFuncsPending = map[string]string{}

// funcLength is one function's place and length, and whether it branches.
type funcLength struct {
	where    string // "file name", e.g. "selection/selection.go Select"
	lines    int
	branches bool
}

// funcLengths measures every function and method of the module's non-test code.
func funcLengths(files []goFile) []funcLength {
	var out []funcLength
	for _, fl := range files {
		if fl.test {
			continue
		}
		for _, d := range fl.f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			lines := fl.fset.Position(fd.End()).Line - fl.fset.Position(fd.Pos()).Line + 1
			out = append(out, funcLength{fl.path + " " + fd.Name.Name, lines, branches(fd.Body)})
		}
	}
	return out
}

// branches says whether a body has an if, for, switch or select outside its function
// literals (a table's rows may hold functions that branch).
func branches(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
			found = true
		}
		return !found
	})
	return found
}

// TestNoLongFunctions: no function that branches is over maxFuncLines lines, but those of
// longFuncsPending; an entry there that is no longer long is to be deleted.
func TestNoLongFunctions(t *testing.T) {
	_, files := loadModule(t)
	var found []string
	seen := map[string]bool{}
	for _, f := range funcLengths(files) {
		seen[f.where] = true
		if f.lines <= maxFuncLines || !f.branches {
			if longFuncsPending[f.where] != "" {
				found = append(found, fmt.Sprintf("%s: in longFuncsPending but %d lines, not over %d: delete the entry", f.where, f.lines, maxFuncLines))
			}
			continue
		}
		if why := longFuncsPending[f.where]; why != "" {
			t.Logf("%s: %d lines, left for now: %s", f.where, f.lines, why)
			continue
		}
		found = append(found, fmt.Sprintf("%s: %d lines, over %d: split it", f.where, f.lines, maxFuncLines))
	}
	for where := range longFuncsPending {
		if !seen[where] {
			found = append(found, fmt.Sprintf("%s: listed in longFuncsPending but not found: delete the entry", where))
		}
	}
	slices.Sort(found)
	for _, f := range found {
		t.Error(f)
	}
}

// maxLineChars is the longest a line of Go may be, in characters (a tab counts one, as in
// golangci-lint's lll): past it a line needs scrolling in a review.
const maxLineChars = 160

// TestNoLongLines: no line of Go is over maxLineChars characters.
func TestNoLongLines(t *testing.T) {
	_, files := loadModule(t)
	var found []string
	for _, fl := range files {
		long := 0
		first := 0
		for i, line := range bytes.Split(fl.src, []byte("\n")) {
			if utf8.RuneCount(line) > maxLineChars {
				long++
				if first == 0 {
					first = i + 1
				}
			}
		}
		if long > 0 {
			found = append(found, fmt.Sprintf("%s:%d: %d lines over %d characters (the first here): wrap them", fl.path, first, long, maxLineChars))
		}
	}
	slices.Sort(found)
	for _, f := range found {
		t.Error(f)
	}
}

// TestFuncLengthsOnAMadeUpModule: a long function that branches is counted as such, a long
// table is not said to branch, and a branch inside a table's function literal is the
// literal's.
func TestFuncLengthsOnAMadeUpModule(t *testing.T) {
	rows := strings.Repeat("\t\t{\"x\", func() int { if true { return 1 }; return 0 }},\n", 90)
	body := strings.Repeat("\tn++\n", 85)
	fsys := fstest.MapFS{"p/p.go": {Data: []byte("package p\n\nfunc table() []row {\n\treturn []row{\n" + rows + "\t}\n}\n\n" +
		"func long(n int) int {\n\tif n > 0 {\n\t\tn--\n\t}\n" + body + "\treturn n\n}\n\ntype row struct {\n\tname string\n\tf    func() int\n}\n")}}
	files, err := parseModule(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := []funcLength{{"p/p.go table", 94, false}, {"p/p.go long", 91, true}}
	if diff := cmp.Diff(want, funcLengths(files), cmp.AllowUnexported(funcLength{})); diff != "" {
		t.Errorf("funcLengths (-want +got):\n%s", diff)
	}
}
