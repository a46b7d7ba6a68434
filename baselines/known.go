package baselines

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
	"gopkg.in/yaml.v3"
)

// LoadKnown reads a known-failures file: a YAML list of entries
//
//   - case: wan2_1_t2v_1.3b          # case id or glob
//     check: perf.stage.*            # check name glob
//     request: 2                     # optional: only this 1-based request
//     reason: DecodingStage regressed by the VAE tiling change
//     link: https://github.com/org/repo/issues/123
//     until: 2026-09-30              # optional: after this day the entry no longer hides the failure
//
// (or a mapping with the list under "known_failures:"). Decoding is strict; every problem is
// reported at once as "file:line: known_failures[i].field: message".
func LoadKnown(path string) ([]checks.KnownEntry, error) {
	data, err := readInput(path)
	if err != nil {
		return nil, fmt.Errorf("read known failures: %w", err)
	}
	return parseKnown(path, data)
}

// parseKnown decodes the contents of a known-failures file; name names it in messages.
func parseKnown(name string, data []byte) ([]checks.KnownEntry, error) {
	d := &strictdecode.YAML{Problems: strictdecode.Problems{File: name}}
	root := d.Document(data, "a known-failures file", "")
	if root == nil {
		return nil, d.Err() // nil for an empty file: it lists nothing
	}
	list := root
	if strictdecode.Deref(root).Kind == yaml.MappingNode {
		es, _ := d.Entries(root, "")
		list = nil
		for _, e := range es {
			if e.Name == "known_failures" {
				list = e.Val
				continue
			}
			d.Addf(e.Key.Line, e.Name, "unknown key (want a list of entries, or known_failures: with the list)")
		}
		if list == nil {
			d.Addf(root.Line, "known_failures", "missing")
			return nil, d.Err()
		}
	}
	if strictdecode.IsNull(list) {
		return nil, d.Err()
	}
	if strictdecode.Deref(list).Kind != yaml.SequenceNode {
		d.Addf(list.Line, "known_failures", "want a list of entries, got %s", strictdecode.Describe(list))
		return nil, d.Err()
	}
	var out []checks.KnownEntry
	for i, item := range strictdecode.Deref(list).Content {
		field := fmt.Sprintf("known_failures[%d]", i)
		if strictdecode.Deref(item).Kind != yaml.MappingNode {
			d.Addf(item.Line, field, "want a mapping with case, check, reason, got %s", strictdecode.Describe(item))
			continue
		}
		out = append(out, knownEntry(d, field, item))
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// knownKey is one key of a known-failures entry: whether an entry must have it, and how its
// value (a scalar node) is read into the entry (a problem message, or "" when it is taken).
type knownKey struct {
	name     string
	required bool
	set      func(e *checks.KnownEntry, v *yaml.Node) (problem string)
}

// knownKeys are the keys of an entry, in the order the docs list them: the one list the
// decoder, the unknown-key message and the missing-key check read.
var knownKeys = []knownKey{
	{"case", true, func(e *checks.KnownEntry, v *yaml.Node) string { return setGlob(&e.Case, v.Value) }},
	{"check", true, func(e *checks.KnownEntry, v *yaml.Node) string { return setGlob(&e.Check, v.Value) }},
	{"request", false, func(e *checks.KnownEntry, v *yaml.Node) string {
		var n int
		if err := v.Decode(&n); err != nil || n < 1 {
			return fmt.Sprintf("want a request index ≥ 1, got %q", v.Value)
		}
		e.Request = n
		return ""
	}},
	{"reason", true, func(e *checks.KnownEntry, v *yaml.Node) string { e.Reason = v.Value; return "" }},
	{"link", false, func(e *checks.KnownEntry, v *yaml.Node) string { e.Link = v.Value; return "" }},
	{"until", false, func(e *checks.KnownEntry, v *yaml.Node) string {
		if _, err := time.Parse(time.DateOnly, v.Value); err != nil {
			return fmt.Sprintf("want a date YYYY-MM-DD, got %q", v.Value)
		}
		e.Until = v.Value
		return ""
	}},
}

// setGlob sets a case or check pattern: a name or a path.Match glob, not empty.
func setGlob(dst *string, v string) string {
	if _, err := path.Match(v, ""); err != nil || v == "" {
		return fmt.Sprintf("want a name or glob pattern (*, ?, [..]), got %q", v)
	}
	*dst = v
	return ""
}

// knownKeyNames lists the keys of knownKeys, for the unknown-key message.
func knownKeyNames() string {
	names := make([]string, len(knownKeys))
	for i, k := range knownKeys {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

// knownEntry decodes one entry of the list (item, at field), reporting problems to d.
func knownEntry(d *strictdecode.YAML, field string, item *yaml.Node) checks.KnownEntry {
	e := checks.KnownEntry{Source: fmt.Sprintf("%s:%d", d.File, item.Line)}
	es, _ := d.Entries(item, field)
	seen := map[string]bool{}
	for _, kv := range es {
		f := field + "." + kv.Name
		seen[kv.Name] = true
		i := slices.IndexFunc(knownKeys, func(k knownKey) bool { return k.name == kv.Name })
		if i < 0 {
			d.Addf(kv.Key.Line, f, "unknown key (known: %s)", knownKeyNames())
			continue
		}
		v := strictdecode.Deref(kv.Val)
		if v.Kind != yaml.ScalarNode {
			d.Addf(kv.Val.Line, f, "want a single value, got %s", strictdecode.Describe(v))
			continue
		}
		if problem := knownKeys[i].set(&e, v); problem != "" {
			d.Addf(kv.Val.Line, f, "%s", problem)
		}
	}
	for _, k := range knownKeys {
		if k.required && !seen[k.name] {
			d.Addf(item.Line, field+"."+k.name, "missing")
		}
	}
	if seen["reason"] && e.Reason == "" {
		d.Addf(item.Line, field+".reason", "empty; say why the failure is accepted")
	}
	return e
}
