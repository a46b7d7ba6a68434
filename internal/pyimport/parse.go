package pyimport

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Import is one imported module: `import a.b` gives Module "a.b"; `from ..x import y, z`
// gives Level 2, Module "x", Names [y z]; a literal import_module gives the absolute name.
type Import struct {
	Module string
	Level  int      // leading dots of a relative import; 0 for an absolute one
	Names  []string // the names of a from-import ("*" for a star import); nil otherwise
	Line   int
	// Lazy: inside a function, so it runs only when the function is called.
	Lazy bool
}

// Site is a call that imports a module whose name is computed at run time.
type Site struct {
	Func string // the enclosing function, as Class.method or outer.inner; "" at module level
	Call string // import_module, __import__ or spec_from_file_location
	Line int
}

// File is what Parse reads of one module.
type File struct {
	Imports []Import
	Sites   []Site
	// Dotted are the string literals that look like a dotted Python name ("a.b.C"): a
	// registry that loads classes by qualified name keeps them as such strings.
	Dotted []string
}

// Parse reads a module's source. It never fails on what Python would accept; a source it
// cannot tokenize (an unterminated string or bracket) is an error naming the line.
func Parse(src []byte) (*File, error) {
	lines, err := logicalLines(string(src))
	if err != nil {
		return nil, err
	}
	f := &File{}
	var scopes []scope // enclosing def/class blocks
	skip := -1         // indentation of an `if TYPE_CHECKING:` whose block is being skipped
	for _, ll := range lines {
		for len(scopes) > 0 && ll.indent <= scopes[len(scopes)-1].indent {
			scopes = scopes[:len(scopes)-1]
		}
		if skip >= 0 {
			if ll.indent > skip {
				continue
			}
			skip = -1
		}
		for _, t := range ll.toks {
			if t.kind == tString && t.plain && dottedName(t.text) {
				mod, _, _ := strings.Cut(t.text, ":")
				f.Dotted = append(f.Dotted, mod)
			}
		}
		stmts := statements(ll.toks)
		for i, stmt := range stmts {
			if isTypeChecking(stmt) {
				if i == len(stmts)-1 {
					skip = ll.indent // its block, on the lines that follow
				}
				break // or the rest of this line: `if TYPE_CHECKING: import x`
			}
			if len(stmt) > 1 && (stmt[0].is("def") || stmt[0].is("class")) && stmt[1].kind == tName {
				scopes = append(scopes, scope{indent: ll.indent, name: stmt[1].text, def: stmt[0].is("def")})
			}
			f.read(stmt, ll.line, scopes)
		}
	}
	return f, nil
}

type scope struct {
	indent int
	name   string
	def    bool // a function, not a class
}

func funcName(scopes []scope) string {
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = s.name
	}
	return strings.Join(names, ".")
}

// read takes the imports and import calls of one simple statement.
func (f *File) read(stmt []token, line int, scopes []scope) {
	fn, lazy := funcName(scopes), slices.ContainsFunc(scopes, func(s scope) bool { return s.def })
	n := len(f.Imports)
	defer func() {
		for i := n; i < len(f.Imports); i++ {
			f.Imports[i].Lazy = lazy
		}
	}()
	switch {
	case stmt[0].is("import"):
		for _, part := range split(stmt[1:], ",") {
			if name, n := dotted(part); n > 0 && name != "" {
				f.Imports = append(f.Imports, Import{Module: name, Line: line})
			}
		}
		return
	case stmt[0].is("from"):
		level, i := 0, 1
		for ; i < len(stmt) && stmt[i].kind == tOp && (stmt[i].text == "." || stmt[i].text == "..."); i++ {
			level += len(stmt[i].text)
		}
		name, n := dotted(stmt[i:])
		i += n
		if i >= len(stmt) || !stmt[i].is("import") || (name == "" && level == 0) {
			return
		}
		var names []string
		for _, part := range split(trimParens(stmt[i+1:]), ",") {
			if len(part) > 0 && part[0].kind == tOp && part[0].text == "*" {
				names = append(names, "*")
			} else if len(part) > 0 && part[0].kind == tName {
				names = append(names, part[0].text)
			}
		}
		f.Imports = append(f.Imports, Import{Module: name, Level: level, Names: names, Line: line})
		return
	}
	for i := 0; i+1 < len(stmt); i++ {
		t := stmt[i]
		if t.kind != tName || stmt[i+1].kind != tOp || stmt[i+1].text != "(" {
			continue
		}
		switch t.text {
		case "import_module", "__import__":
			args := callArgs(stmt[i+2:])
			if imp, ok := literalImport(args); ok {
				imp.Line = line
				f.Imports = append(f.Imports, imp)
			} else {
				f.Sites = append(f.Sites, Site{Func: fn, Call: t.text, Line: line})
			}
		case "spec_from_file_location":
			f.Sites = append(f.Sites, Site{Func: fn, Call: t.text, Line: line})
		}
	}
}

// literalImport reads import_module("a.b") and import_module(".b", package="a") (or
// __import__("a.b")): the module is known when every part that names it is a plain string.
func literalImport(args [][]token) (Import, bool) {
	if len(args) == 0 || len(args[0]) != 1 || args[0][0].kind != tString || !args[0][0].plain {
		return Import{}, false
	}
	name := args[0][0].text
	level := len(name) - len(strings.TrimLeft(name, "."))
	name = name[level:]
	if level == 0 {
		return Import{Module: name}, name != ""
	}
	for _, a := range args[1:] {
		if len(a) == 3 && a[0].is("package") && a[1].text == "=" && a[2].kind == tString && a[2].plain {
			base := strings.Split(a[2].text, ".")
			if level-1 > len(base) {
				return Import{}, false
			}
			abs := strings.Join(base[:len(base)-(level-1)], ".")
			if name != "" {
				abs += "." + name
			}
			return Import{Module: abs}, true
		}
	}
	return Import{}, false
}

// dottedName reports whether s is a qualified name with at least two parts: "a.b.C", or
// "a.b:C" as entry-point style targets write it.
func dottedName(s string) bool {
	if mod, attr, ok := strings.Cut(s, ":"); ok {
		return strings.Contains(mod, ".") && ModuleName(mod) && ModuleName(attr)
	}
	return strings.Contains(s, ".") && ModuleName(s)
}

// ModuleName reports whether s is a dotted Python name ("a", "a.b_c").
func ModuleName(s string) bool {
	for _, p := range strings.Split(s, ".") {
		if !identifier(p) {
			return false
		}
	}
	return true
}

func identifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// dotted reads a dotted name at the start of toks, returning it and the tokens it took.
func dotted(toks []token) (string, int) {
	var b strings.Builder
	i := 0
	for i < len(toks) && toks[i].kind == tName && !keyword(toks[i].text) {
		b.WriteString(toks[i].text)
		i++
		if i+1 < len(toks) && toks[i].kind == tOp && toks[i].text == "." && toks[i+1].kind == tName {
			b.WriteByte('.')
			i++
			continue
		}
		break
	}
	return b.String(), i
}

func keyword(s string) bool { return s == "import" || s == "as" }

// isTypeChecking reports whether stmt is the header `if TYPE_CHECKING:` (or
// typing.TYPE_CHECKING), whose block never runs.
func isTypeChecking(stmt []token) bool {
	if len(stmt) < 3 || !stmt[0].is("if") {
		return false
	}
	i := 1
	if len(stmt) > 4 && stmt[1].is("typing") && stmt[2].text == "." {
		i = 3
	}
	return len(stmt) == i+2 && stmt[i].is("TYPE_CHECKING") && stmt[i+1].kind == tOp && stmt[i+1].text == ":"
}

// statements splits a logical line into its simple statements: at ";" and after the header
// of a compound statement that has its body on the same line (`try: import x`).
func statements(toks []token) [][]token {
	var out [][]token
	for _, s := range split(toks, ";") {
		for len(s) > 0 {
			if !compound(s[0]) {
				out = append(out, s)
				break
			}
			colon := topLevel(s, ":")
			if colon < 0 || colon == len(s)-1 {
				out = append(out, s)
				break
			}
			out = append(out, s[:colon+1])
			s = s[colon+1:]
		}
	}
	return out
}

func compound(t token) bool {
	switch t.text {
	case "if", "elif", "else", "try", "except", "finally", "with", "for", "while", "def", "class":
		return t.kind == tName
	}
	return false
}

// topLevel is the index of the first op tok outside brackets (and, for ":", outside a lambda
// or a slice), or -1.
func topLevel(toks []token, op string) int {
	depth, lambdas := 0, 0
	for i, t := range toks {
		switch {
		case t.kind == tName && t.text == "lambda":
			lambdas++
		case t.kind != tOp:
		case t.text == "(" || t.text == "[" || t.text == "{":
			depth++
		case t.text == ")" || t.text == "]" || t.text == "}":
			depth--
		case depth == 0 && t.text == op:
			if op == ":" && lambdas > 0 {
				lambdas--
				continue
			}
			return i
		}
	}
	return -1
}

// split cuts toks at every top-level op.
func split(toks []token, op string) [][]token {
	var out [][]token
	for {
		i := topLevel(toks, op)
		if i < 0 {
			if len(toks) > 0 {
				out = append(out, toks)
			}
			return out
		}
		out = append(out, toks[:i])
		toks = toks[i+1:]
	}
}

// trimParens drops the parentheses around a from-import's names.
func trimParens(toks []token) []token {
	if len(toks) >= 2 && toks[0].kind == tOp && toks[0].text == "(" && toks[len(toks)-1].kind == tOp && toks[len(toks)-1].text == ")" {
		return toks[1 : len(toks)-1]
	}
	return toks
}

// callArgs are the top-level arguments of a call whose "(" came just before toks.
func callArgs(toks []token) [][]token {
	depth := 0
	for i, t := range toks {
		if t.kind != tOp {
			continue
		}
		switch t.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			if depth == 0 {
				return split(toks[:i], ",")
			}
			depth--
		}
	}
	return nil
}

type tokKind int

const (
	tName tokKind = iota
	tString
	tOp
	tNumber
)

type token struct {
	kind tokKind
	text string // a string's value (its contents, escapes left as written)
	// plain: a string without an f prefix (no interpolation) and not joined with another
	plain bool
}

func (t token) is(name string) bool { return t.kind == tName && t.text == name }

type logicalLine struct {
	line, indent int
	toks         []token
}

// logicalLines tokenizes src into Python's logical lines: a bracket or a backslash continues
// a line; comments and blank lines are dropped.
func logicalLines(src string) ([]logicalLine, error) {
	lx := &lexer{src: src, line: 1, atStart: true}
	for lx.i < len(src) {
		if lx.space() {
			continue
		}
		if lx.cur == nil {
			indent := lx.col
			if !lx.atStart {
				indent = 0
			}
			lx.cur = &logicalLine{line: lx.line, indent: indent}
		}
		lx.atStart = false
		if err := lx.token(); err != nil {
			return nil, err
		}
	}
	if lx.depth > 0 {
		return nil, fmt.Errorf("line %d: unclosed bracket at end of file", lx.line)
	}
	if lx.cur != nil {
		lx.out = append(lx.out, *lx.cur)
	}
	return lx.out, nil
}

// lexer is logicalLines' position in the source.
type lexer struct {
	src          string
	i, line, col int
	depth        int  // open brackets
	atStart      bool // at the start of a physical line, before its first token
	cur          *logicalLine
	out          []logicalLine
}

// space consumes what is not a token (a newline, a continuation, blanks, a comment) and
// reports whether it did.
func (lx *lexer) space() bool {
	src, c := lx.src, lx.src[lx.i]
	switch {
	case c == '\n':
		lx.line++
		lx.col, lx.atStart = 0, true
		lx.i++
		if lx.depth == 0 && lx.cur != nil {
			lx.out = append(lx.out, *lx.cur)
			lx.cur = nil
		}
	case c == '\\' && lx.i+1 < len(src) && (src[lx.i+1] == '\n' || src[lx.i+1] == '\r'):
		lx.i++
		if src[lx.i] == '\r' {
			lx.i++
		}
		if lx.i < len(src) && src[lx.i] == '\n' {
			lx.i++
		}
		lx.line++
		lx.col, lx.atStart = 0, false
	case c == '\t':
		lx.col += 8 - lx.col%8
		lx.i++
	case c == ' ' || c == '\r' || c == '\f':
		lx.col++
		lx.i++
	case c == '#':
		for lx.i < len(src) && src[lx.i] != '\n' {
			lx.i++
		}
	default:
		return false
	}
	return true
}

// token consumes one token into the current logical line.
func (lx *lexer) token() error {
	src, i := lx.src, lx.i
	if q, n := stringStart(src[i:]); n > 0 {
		val, end, lines, err := readString(src, i+n, q)
		if err != nil {
			return fmt.Errorf("line %d: %w", lx.line, err)
		}
		prefix := strings.ToLower(src[i : i+n-len(q)])
		tok := token{kind: tString, text: val, plain: !strings.ContainsAny(prefix, "ft")}
		if k := len(lx.cur.toks); k > 0 && lx.cur.toks[k-1].kind == tString {
			lx.cur.toks[k-1].plain = false // implicit concatenation: not one literal
			tok.plain = false
		}
		lx.emit(tok, end)
		lx.line += lines
		return nil
	}
	r, size := utf8.DecodeRuneInString(src[i:])
	switch {
	case r == '_' || unicode.IsLetter(r):
		j := i
		for j < len(src) {
			r, n := utf8.DecodeRuneInString(src[j:])
			if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			j += n
		}
		lx.emit(token{kind: tName, text: src[i:j]}, j)
	case r >= '0' && r <= '9':
		j := i
		for j < len(src) && (isAlnum(src[j]) || src[j] == '.' || src[j] == '_') {
			j++
		}
		lx.emit(token{kind: tNumber, text: src[i:j]}, j)
	default:
		op := src[i : i+size]
		if strings.HasPrefix(src[i:], "...") {
			op = "..."
		}
		switch op {
		case "(", "[", "{":
			lx.depth++
		case ")", "]", "}":
			lx.depth = max(lx.depth-1, 0)
		}
		lx.emit(token{kind: tOp, text: op}, i+len(op))
	}
	return nil
}

// emit appends a token that ends at end.
func (lx *lexer) emit(t token, end int) {
	lx.cur.toks = append(lx.cur.toks, t)
	lx.col += end - lx.i
	lx.i = end
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// stringStart recognizes a string literal's prefix and opening quote at the start of s,
// returning the quote (', ", ”' or """) and the length of prefix plus quote.
func stringStart(s string) (string, int) {
	p := 0
	for p < len(s) && p < 3 && strings.ContainsRune("rRbBuUfFtT", rune(s[p])) {
		p++
	}
	if p >= len(s) || (s[p] != '\'' && s[p] != '"') {
		return "", 0
	}
	if p > 0 && !validPrefix(strings.ToLower(s[:p])) {
		return "", 0
	}
	q := s[p : p+1]
	if strings.HasPrefix(s[p:], q+q+q) {
		q = q + q + q
	}
	return q, p + len(q)
}

func validPrefix(p string) bool {
	switch p {
	case "r", "u", "b", "f", "t", "br", "rb", "fr", "rf", "tr", "rt":
		return true
	}
	return false
}

// readString reads a string's body from i (after the opening quote) to its closing quote,
// returning the body, the index after the quote and the newlines it spanned.
func readString(src string, i int, q string) (string, int, int, error) {
	start, lines := i, 0
	for i < len(src) {
		switch {
		case src[i] == '\\':
			if i+1 < len(src) && src[i+1] == '\n' {
				lines++
			}
			i += 2
			continue
		case strings.HasPrefix(src[i:], q):
			return src[start:i], i + len(q), lines, nil
		case src[i] == '\n':
			if len(q) == 1 {
				return "", 0, 0, fmt.Errorf("unterminated string")
			}
			lines++
		}
		i++
	}
	return "", 0, 0, fmt.Errorf("unterminated string at end of file")
}
