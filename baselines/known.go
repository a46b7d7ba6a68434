package baselines

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"time"

	"github.com/diffusion-check/diffusion-check/checks"
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
	return ParseKnown(path, data)
}

// ParseKnown decodes the contents of a known-failures file; name names it in messages.
func ParseKnown(name string, data []byte) ([]checks.KnownEntry, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil // an empty file lists nothing
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var errs []error
	errorf := func(line int, field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s: %s", name, line, field, fmt.Sprintf(format, args...)))
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	list := root
	if root.Kind == yaml.MappingNode {
		list = nil
		for i := 0; i+1 < len(root.Content); i += 2 {
			k := root.Content[i]
			if k.Value == "known_failures" {
				list = root.Content[i+1]
				continue
			}
			errorf(k.Line, k.Value, "unknown key (want a list of entries, or known_failures: with the list)")
		}
		if list == nil {
			errorf(root.Line, "known_failures", "missing")
			return nil, errors.Join(errs...)
		}
	}
	if list.Kind == yaml.ScalarNode && list.Tag == "!!null" {
		return nil, errors.Join(errs...)
	}
	if list.Kind != yaml.SequenceNode {
		errorf(list.Line, "known_failures", "want a list of entries")
		return nil, errors.Join(errs...)
	}
	var out []checks.KnownEntry
	for i, item := range list.Content {
		field := fmt.Sprintf("known_failures[%d]", i)
		if item.Kind != yaml.MappingNode {
			errorf(item.Line, field, "want a mapping with case, check, reason")
			continue
		}
		out = append(out, knownEntry(name, field, item, errorf))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// knownEntry decodes one entry of the list (item, at field), reporting problems to errorf.
func knownEntry(name, field string, item *yaml.Node, errorf func(line int, field, format string, args ...any)) checks.KnownEntry {
	e := checks.KnownEntry{Source: fmt.Sprintf("%s:%d", name, item.Line)}
	seen := map[string]bool{}
	for j := 0; j+1 < len(item.Content); j += 2 {
		k, v := item.Content[j], item.Content[j+1]
		f := field + "." + k.Value
		if seen[k.Value] {
			errorf(k.Line, f, "given twice")
			continue
		}
		seen[k.Value] = true
		if v.Kind != yaml.ScalarNode {
			errorf(v.Line, f, "want a single value")
			continue
		}
		switch k.Value {
		case "case", "check":
			if _, err := path.Match(v.Value, ""); err != nil || v.Value == "" {
				errorf(v.Line, f, "want a name or glob pattern (*, ?, [..]), got %q", v.Value)
				continue
			}
			if k.Value == "case" {
				e.Case = v.Value
			} else {
				e.Check = v.Value
			}
		case "request":
			var n int
			if err := v.Decode(&n); err != nil || n < 1 {
				errorf(v.Line, f, "want a request index ≥ 1, got %q", v.Value)
				continue
			}
			e.Request = n
		case "reason":
			e.Reason = v.Value
		case "link":
			e.Link = v.Value
		case "until":
			if _, err := time.Parse(time.DateOnly, v.Value); err != nil {
				errorf(v.Line, f, "want a date YYYY-MM-DD, got %q", v.Value)
				continue
			}
			e.Until = v.Value
		default:
			errorf(k.Line, f, "unknown key (known: case, check, request, reason, link, until)")
		}
	}
	for _, req := range []struct {
		key string
		v   string
	}{{"case", e.Case}, {"check", e.Check}, {"reason", e.Reason}} {
		if !seen[req.key] {
			errorf(item.Line, field+"."+req.key, "missing")
		} else if req.v == "" && req.key == "reason" {
			errorf(item.Line, field+".reason", "empty; say why the failure is accepted")
		}
	}
	return e
}
