package suite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Error is one problem in a suite file. Load and Parse join every problem they find with
// errors.Join, so a caller can print them all at once or pick them out with errors.As.
type Error struct {
	File  string // the suite file, as given to Load
	Line  int    // 1-based line of the offending key or value
	Field string // e.g. "cases[2].repeat"; empty for problems with the file as a whole
	Msg   string
}

// Error formats the problem as "file:line: field: message", the form editors and CI logs link.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":")
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// maxAliasNodes bounds the nodes that aliases add to a suite when expanded (what each alias
// stands for, nested aliases included). Only expansions count: a long suite written out in
// full (thousands of cases, hundreds of thousands of nodes) costs its own size to walk, while
// a few lines of nested aliases could otherwise cost minutes.
const maxAliasNodes = 100_000

// decoder walks a yaml.Node tree strictly, collecting every problem instead of stopping at the
// first, so that one run of diffusion-check lists all of them.
type decoder struct {
	file string // as given, for messages
	dir  string // absolute folder of the suite file, for relative paths
	errs []*Error
}

func (d *decoder) errorf(line int, field, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// err returns the problems in line order, so that they read like the file; problems reached
// twice through one anchor are listed once.
func (d *decoder) err() error {
	slices.SortStableFunc(d.errs, func(a, b *Error) int { return a.Line - b.Line })
	var errs []error
	seen := map[Error]bool{}
	for _, e := range d.errs {
		if !seen[*e] {
			seen[*e] = true
			errs = append(errs, e)
		}
	}
	return errors.Join(errs...)
}

// document parses data into the root node of its one document; nil after a reported problem.
func (d *decoder) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errorf(1, "", "empty file; want a mapping with name, servers and cases")
		} else {
			d.syntaxError(data, err)
		}
		return nil
	}
	// A second document would be ignored silently by a plain decode; refuse it instead.
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		d.errorf(next.Line, "", "a second YAML document; a suite file holds one")
		return nil
	case !errors.Is(err, io.EOF):
		d.syntaxError(data, err)
		return nil
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		d.errorf(max(doc.Line, 1), "", "empty file; want a mapping with name, servers and cases")
		return nil
	}
	root := doc.Content[0]
	// Aliases make the tree a graph: refuse cycles and exponential expansions before walking it.
	added, ok := aliasExpansion(root, map[*yaml.Node]int{})
	if !ok {
		d.errorf(root.Line, "", "an alias refers to a node that contains it")
		return nil
	}
	if added > maxAliasNodes {
		d.errorf(root.Line, "", "the file's aliases expand to more than %d YAML nodes", maxAliasNodes)
		return nil
	}
	return root
}

// syntaxError reports a yaml.v3 parse error at the best line it can recover: yaml.v3 omits
// the line for problems on the first line and for unknown anchors, and is off by one for
// parser (not scanner) errors.
func (d *decoder) syntaxError(data []byte, err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				line, msg = n, text
			}
		}
	}
	switch msg {
	case "did not find expected ',' or ']'", "did not find expected ',' or '}'",
		"did not find expected '-' indicator", "did not find expected <document start>",
		"did not find expected <stream-start>", "did not find expected key",
		"did not find expected node content", "found duplicate %TAG directive",
		"found duplicate %YAML directive", "found incompatible YAML document",
		"found undefined tag handle":
		// yaml.v3 counts lines from 0 for parser errors (from 1 for scanner errors); the line
		// is where the enclosing block starts, or where the problem is.
		line++
	}
	if line > 0 {
		d.errorf(min(line, bytes.Count(data, []byte("\n"))+1), "", "invalid YAML: %s", msg)
		return
	}
	line = 1
	if rest, ok := strings.CutPrefix(msg, "unknown anchor '"); ok {
		anchor, _, _ := strings.Cut(rest, "' referenced")
		if i := bytes.Index(data, []byte("*"+anchor)); i >= 0 {
			line += bytes.Count(data[:i], []byte("\n"))
		}
	}
	d.errorf(line, "", "invalid YAML: %s", msg)
}

// aliasExpansion counts the nodes the aliases under n add when expanded: for each alias
// written in the file, the expanded size of its anchor's node. The nodes written out are not
// counted. ok is false for a cycle; the count saturates just above maxAliasNodes.
func aliasExpansion(n *yaml.Node, memo map[*yaml.Node]int) (added int, ok bool) {
	// The tree as written (aliases not followed) is a tree: walk it without recursion, so
	// that a deeply nested file costs no stack.
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			s, ok := expandedSize(n.Alias, memo, map[*yaml.Node]bool{})
			if !ok {
				return 0, false
			}
			if added = min(added+s, maxAliasNodes+1); added > maxAliasNodes {
				return added, true
			}
			continue
		}
		stack = append(stack, n.Content...)
	}
	return added, true
}

// expandedSize counts the nodes under n with aliases expanded; ok is false for a cycle.
// memo keeps it linear in the size of the file; the count saturates just above maxAliasNodes.
func expandedSize(n *yaml.Node, memo map[*yaml.Node]int, active map[*yaml.Node]bool) (size int, ok bool) {
	if s, done := memo[n]; done {
		return s, true
	}
	if active[n] {
		return 0, false
	}
	active[n] = true
	defer delete(active, n)
	size = 1
	children := n.Content
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		children = []*yaml.Node{n.Alias}
	}
	for _, c := range children {
		s, ok := expandedSize(c, memo, active)
		if !ok {
			return 0, false
		}
		size = min(size+s, maxAliasNodes+1)
	}
	memo[n] = size
	return size, true
}

// deref follows an alias to its anchor's node.
func deref(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names what a node is for "want X, got Y" messages.
func describe(n *yaml.Node) string {
	n = deref(n)
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case isNull(n):
		return "null"
	}
	v := n.Value
	if r := []rune(v); len(r) > 60 {
		v = string(r[:60]) + "…"
	}
	return strconv.Quote(v)
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// entry is one key of a mapping. key and val are the nodes as written, so that an alias is
// reported at the line where it is used rather than where its anchor is.
type entry struct {
	name     string
	key, val *yaml.Node
}

// entries returns the keys of a mapping in order, reporting duplicates. Merge keys
// ("<<: *defaults") are expanded; keys written in the mapping win over merged ones, and an
// earlier merged mapping wins over a later one, as YAML specifies.
func (d *decoder) entries(raw *yaml.Node, field string) ([]entry, bool) {
	n := deref(raw)
	if n.Kind != yaml.MappingNode {
		d.errorf(raw.Line, field, "want a mapping, got %s", describe(n))
		return nil, false
	}
	seen := map[string]*yaml.Node{}
	var out []entry
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		kn := deref(k)
		if kn.Kind != yaml.ScalarNode {
			d.errorf(k.Line, field, "keys must be strings, got %s", describe(kn))
			continue
		}
		if kn.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if first, dup := seen[kn.Value]; dup {
			d.errorf(k.Line, join(field, kn.Value), "duplicate key, first at line %d", first.Line)
			continue
		}
		seen[kn.Value] = k
		out = append(out, entry{name: kn.Value, key: k, val: v})
	}
	for _, m := range merges {
		sources := []*yaml.Node{m}
		if mn := deref(m); mn.Kind == yaml.SequenceNode {
			sources = mn.Content
		}
		for _, src := range sources {
			if deref(src).Kind != yaml.MappingNode {
				d.errorf(src.Line, join(field, "<<"), "want a mapping or a list of mappings to merge, got %s", describe(src))
				continue
			}
			merged, _ := d.entries(src, field)
			for _, e := range merged {
				if _, ok := seen[e.name]; !ok {
					seen[e.name] = e.key
					out = append(out, e)
				}
			}
		}
	}
	return out, true
}

// object is a mapping with a fixed set of keys, such as a case or a server.
type object struct {
	d     *decoder
	line  int    // where the mapping starts, for missing keys
	field string // its path, e.g. "cases[2]"
	vals  map[string]entry
}

// object reads a mapping whose keys must be among allowed; nil after a reported problem.
func (d *decoder) object(raw *yaml.Node, field string, allowed ...string) *object {
	es, ok := d.entries(raw, field)
	if !ok {
		return nil
	}
	o := &object{d: d, line: raw.Line, field: field, vals: map[string]entry{}}
	for _, e := range es {
		if !slices.Contains(allowed, e.name) {
			d.errorf(e.key.Line, field, "unknown key %q (allowed: %s)", e.name, strings.Join(allowed, ", "))
			continue
		}
		o.vals[e.name] = e
	}
	return o
}

// has reports whether key is written, even with an empty value.
func (o *object) has(key string) bool {
	_, ok := o.vals[key]
	return ok
}

// get returns the value of key; an empty value (`key:` or `key: null`) counts as absent, so
// that a commented-out value falls back to the default.
func (o *object) get(key string) (val *yaml.Node, field string, ok bool) {
	e, ok := o.vals[key]
	if !ok || isNull(e.val) {
		return nil, "", false
	}
	return e.val, join(o.field, key), true
}

// require reports key as missing when it is absent or empty.
func (o *object) require(key string) (val *yaml.Node, field string, ok bool) {
	val, field, ok = o.get(key)
	if !ok {
		o.d.errorf(o.line, join(o.field, key), "missing")
	}
	return val, field, ok
}

// lineOf returns the line of key's value, or of the mapping when key is absent.
func (o *object) lineOf(key string) int {
	if e, ok := o.vals[key]; ok {
		return e.val.Line
	}
	return o.line
}

// The typed readers below set *dst only when the key holds a valid value, so a default set
// beforehand survives both an absent key and a reported problem. They return whether they
// set it.

func (o *object) str(key string, dst *string) bool { return readField(o, key, dst, o.d.str) }

func (o *object) integer(key string, dst *int) bool { return readField(o, key, dst, o.d.integer) }

func (o *object) number(key string, dst *float64) bool { return readField(o, key, dst, o.d.number) }

func (o *object) boolean(key string, dst **bool) bool {
	return readField(o, key, dst, func(v *yaml.Node, f string) (*bool, bool) {
		b, ok := o.d.boolean(v, f)
		return &b, ok
	})
}

// readField reads one key with a typed reader, setting *dst only when the value is valid.
func readField[T any](o *object, key string, dst *T, read func(*yaml.Node, string) (T, bool)) bool {
	v, name, ok := o.get(key)
	if !ok {
		return false
	}
	x, ok := read(v, name)
	if ok {
		*dst = x
	}
	return ok
}

// duration reads a Go duration string; least is the smallest allowed value (0 or 1ns).
func (o *object) duration(key string, dst *time.Duration, least time.Duration) bool {
	v, field, ok := o.get(key)
	if !ok {
		return false
	}
	n := deref(v)
	if n.Kind != yaml.ScalarNode {
		o.d.errorf(v.Line, field, "want a duration such as \"90s\" or \"10m\", got %s", describe(n))
		return false
	}
	t, err := time.ParseDuration(n.Value)
	switch {
	case err != nil:
		o.d.errorf(v.Line, field, "want a duration such as \"90s\" or \"10m\", got %s", describe(n))
	case t < least && least > 0:
		o.d.errorf(v.Line, field, "must be > 0, got %s", n.Value)
	case t < least:
		o.d.errorf(v.Line, field, "must not be negative, got %s", n.Value)
	default:
		*dst = t
		return true
	}
	return false
}

// atLeast reports an integer field below least; it returns false when it did.
func (o *object) atLeast(key string, v, least int) bool {
	if v >= least {
		return true
	}
	if least == 0 {
		o.d.errorf(o.lineOf(key), join(o.field, key), "must not be negative, got %d", v)
	} else {
		o.d.errorf(o.lineOf(key), join(o.field, key), "must be ≥ %d, got %d", least, v)
	}
	return false
}

// str accepts any scalar as written, so that `gpu: 5090` or an argv element `2` are strings.
func (d *decoder) str(raw *yaml.Node, field string) (string, bool) {
	n := deref(raw)
	if n.Kind != yaml.ScalarNode {
		d.errorf(raw.Line, field, "want a string, got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

// integer accepts only YAML integers: a quoted "2" is a string, as in JSON.
func (d *decoder) integer(raw *yaml.Node, field string) (int, bool) {
	n := deref(raw)
	var v int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil || int64(int(v)) != v {
		d.errorf(raw.Line, field, "want an integer, got %s", describe(n))
		return 0, false
	}
	return int(v), true
}

func (d *decoder) number(raw *yaml.Node, field string) (float64, bool) {
	n := deref(raw)
	var v float64
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || n.Decode(&v) != nil {
		d.errorf(raw.Line, field, "want a number, got %s", describe(n))
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		d.errorf(raw.Line, field, "must be a finite number, got %s", describe(n))
		return 0, false
	}
	return v, true
}

// boolean accepts only true and false; YAML 1.1's yes/no/on/off are strings in YAML 1.2.
func (d *decoder) boolean(raw *yaml.Node, field string) (bool, bool) {
	n := deref(raw)
	var v bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		d.errorf(raw.Line, field, "want true or false, got %s", describe(n))
		return false, false
	}
	return v, true
}

// strings reads a list of scalars; nil elements are reported, not skipped, since a missing
// argv element or file is always a mistake.
func (d *decoder) strings(raw *yaml.Node, field string) ([]string, bool) {
	n := deref(raw)
	if n.Kind != yaml.SequenceNode {
		d.errorf(raw.Line, field, "want a list, got %s", describe(n))
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for i, el := range n.Content {
		f := fmt.Sprintf("%s[%d]", field, i)
		if isNull(el) {
			d.errorf(el.Line, f, "empty element")
			ok = false
		}
		s, valid := d.str(el, f)
		ok = ok && valid
		out = append(out, s)
	}
	return out, ok
}

// value converts any YAML value into map[string]any, []any, string, int, float64, bool or
// nil: values that encoding/json can write, because Extra ends up in a JSON request body.
func (d *decoder) value(raw *yaml.Node, field string) (any, bool) {
	n := deref(raw)
	switch n.Kind {
	case yaml.MappingNode:
		es, ok := d.entries(n, field)
		m := make(map[string]any, len(es))
		for _, e := range es {
			v, valid := d.value(e.val, join(field, e.name))
			ok = ok && valid
			m[e.name] = v
		}
		return m, ok
	case yaml.SequenceNode:
		ok := true
		s := make([]any, 0, len(n.Content))
		for i, el := range n.Content {
			v, valid := d.value(el, fmt.Sprintf("%s[%d]", field, i))
			ok = ok && valid
			s = append(s, v)
		}
		return s, ok
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, true
		case "!!bool":
			return d.boolean(raw, field)
		case "!!int":
			var v any
			if n.Decode(&v) != nil {
				d.errorf(raw.Line, field, "want an integer, got %s", describe(n))
				return nil, false
			}
			return v, true
		case "!!float":
			return d.number(raw, field)
		}
		// Strings, and timestamps or custom tags, which JSON can only carry as written.
		return n.Value, true
	}
	d.errorf(raw.Line, field, "want a value, got %s", describe(n))
	return nil, false
}
