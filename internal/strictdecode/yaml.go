package strictdecode

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxAliasNodes bounds the nodes that aliases add to a file when expanded (what each alias
// stands for, nested aliases included). Only expansions count: a long file written out in
// full (thousands of cases, hundreds of thousands of nodes) costs its own size to walk, while
// a few lines of nested aliases could otherwise cost minutes.
const maxAliasNodes = 100_000

// YAML reads YAML files strictly, recording every problem in its Problems.
type YAML struct {
	Problems
}

// Document parses data into the root node of its one document; nil after a reported problem,
// and for an empty document (no node, or null), which is reported as empty unless empty is "".
// kind names the file in the message for a second document ("a suite file").
func (d *YAML) Document(data []byte, kind, empty string) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			if empty != "" {
				d.Addf(1, "", "%s", empty)
			}
		} else {
			d.syntaxError(data, err)
		}
		return nil
	}
	// A second document would be ignored silently by a plain decode; refuse it instead.
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		d.Addf(next.Line, "", "a second YAML document; %s holds one", kind)
		return nil
	case !errors.Is(err, io.EOF):
		d.syntaxError(data, err)
		return nil
	}
	if len(doc.Content) == 0 || IsNull(doc.Content[0]) {
		if empty != "" {
			d.Addf(max(doc.Line, 1), "", "%s", empty)
		}
		return nil
	}
	root := doc.Content[0]
	// Aliases make the tree a graph: refuse cycles and exponential expansions before walking it.
	added, ok := aliasExpansion(root, map[*yaml.Node]int{})
	if !ok {
		d.Addf(root.Line, "", "an alias refers to a node that contains it")
		return nil
	}
	if added > maxAliasNodes {
		d.Addf(root.Line, "", "the file's aliases expand to more than %d YAML nodes", maxAliasNodes)
		return nil
	}
	return root
}

// syntaxError reports a yaml.v3 parse error at the best line it can recover: yaml.v3 omits
// the line for problems on the first line and for unknown anchors, and is off by one for
// parser (not scanner) errors.
func (d *YAML) syntaxError(data []byte, err error) {
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
		d.Addf(min(line, bytes.Count(data, []byte("\n"))+1), "", "invalid YAML: %s", msg)
		return
	}
	line = 1
	if rest, ok := strings.CutPrefix(msg, "unknown anchor '"); ok {
		anchor, _, _ := strings.Cut(rest, "' referenced")
		if i := bytes.Index(data, []byte("*"+anchor)); i >= 0 {
			line += bytes.Count(data[:i], []byte("\n"))
		}
	}
	d.Addf(line, "", "invalid YAML: %s", msg)
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

// Deref follows an alias to its anchor's node.
func Deref(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// IsNull reports whether n (an alias followed) is absent or YAML's null.
func IsNull(n *yaml.Node) bool {
	n = Deref(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// Describe names what a node is for "want X, got Y" messages.
func Describe(n *yaml.Node) string {
	n = Deref(n)
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case IsNull(n):
		return "null"
	}
	v := n.Value
	if r := []rune(v); len(r) > 60 {
		v = string(r[:60]) + "…"
	}
	return strconv.Quote(v)
}

// Join is the key path of key inside field ("" for the top level).
func Join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// Entry is one key of a mapping. Key and Val are the nodes as written, so that an alias is
// reported at the line where it is used rather than where its anchor is.
type Entry struct {
	Name     string
	Key, Val *yaml.Node
}

// Entries returns the keys of a mapping in order, reporting duplicates. Merge keys
// ("<<: *defaults") are expanded; keys written in the mapping win over merged ones, and an
// earlier merged mapping wins over a later one, as YAML specifies.
func (d *YAML) Entries(raw *yaml.Node, field string) ([]Entry, bool) {
	n := Deref(raw)
	if n.Kind != yaml.MappingNode {
		d.Addf(raw.Line, field, "want a mapping, got %s", Describe(n))
		return nil, false
	}
	seen := map[string]*yaml.Node{}
	var out []Entry
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		kn := Deref(k)
		if kn.Kind != yaml.ScalarNode {
			d.Addf(k.Line, field, "keys must be strings, got %s", Describe(kn))
			continue
		}
		if kn.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if first, dup := seen[kn.Value]; dup {
			d.Addf(k.Line, Join(field, kn.Value), "duplicate key, first at line %d", first.Line)
			continue
		}
		seen[kn.Value] = k
		out = append(out, Entry{Name: kn.Value, Key: k, Val: v})
	}
	for _, m := range merges {
		sources := []*yaml.Node{m}
		if mn := Deref(m); mn.Kind == yaml.SequenceNode {
			sources = mn.Content
		}
		for _, src := range sources {
			if Deref(src).Kind != yaml.MappingNode {
				d.Addf(src.Line, Join(field, "<<"), "want a mapping or a list of mappings to merge, got %s", Describe(src))
				continue
			}
			merged, _ := d.Entries(src, field)
			for _, e := range merged {
				if _, ok := seen[e.Name]; !ok {
					seen[e.Name] = e.Key
					out = append(out, e)
				}
			}
		}
	}
	return out, true
}
