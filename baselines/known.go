package baselines

import (
	"fmt"
	"os"
	"path"
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
	data, err := os.ReadFile(path)
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

// knownEntry decodes one entry of the list (item, at field), reporting problems to d.
func knownEntry(d *strictdecode.YAML, field string, item *yaml.Node) checks.KnownEntry {
	e := checks.KnownEntry{Source: fmt.Sprintf("%s:%d", d.File, item.Line)}
	es, _ := d.Entries(item, field)
	seen := map[string]bool{}
	for _, kv := range es {
		k, v := kv.Key, strictdecode.Deref(kv.Val)
		f := field + "." + kv.Name
		seen[kv.Name] = true
		if v.Kind != yaml.ScalarNode {
			d.Addf(kv.Val.Line, f, "want a single value, got %s", strictdecode.Describe(v))
			continue
		}
		switch kv.Name {
		case "case", "check":
			if _, err := path.Match(v.Value, ""); err != nil || v.Value == "" {
				d.Addf(kv.Val.Line, f, "want a name or glob pattern (*, ?, [..]), got %q", v.Value)
				continue
			}
			if kv.Name == "case" {
				e.Case = v.Value
			} else {
				e.Check = v.Value
			}
		case "request":
			var n int
			if err := v.Decode(&n); err != nil || n < 1 {
				d.Addf(kv.Val.Line, f, "want a request index ≥ 1, got %q", v.Value)
				continue
			}
			e.Request = n
		case "reason":
			e.Reason = v.Value
		case "link":
			e.Link = v.Value
		case "until":
			if _, err := time.Parse(time.DateOnly, v.Value); err != nil {
				d.Addf(kv.Val.Line, f, "want a date YYYY-MM-DD, got %q", v.Value)
				continue
			}
			e.Until = v.Value
		default:
			d.Addf(k.Line, f, "unknown key (known: case, check, request, reason, link, until)")
		}
	}
	for _, req := range []struct {
		key string
		v   string
	}{{"case", e.Case}, {"check", e.Check}, {"reason", e.Reason}} {
		if !seen[req.key] {
			d.Addf(item.Line, field+"."+req.key, "missing")
		} else if req.v == "" && req.key == "reason" {
			d.Addf(item.Line, field+".reason", "empty; say why the failure is accepted")
		}
	}
	return e
}
