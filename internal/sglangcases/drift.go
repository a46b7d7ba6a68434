package sglangcases

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Drift is how a committed suite differs from the one SGLang's registry gives now. Comments are
// not compared (the header's commit changes with every commit of SGLang), except which cases
// are written commented out.
type Drift struct {
	// Added and Removed are case ids; Changed names a case and the keys that differ
	// ("wan2_1_t2v (request, checks)").
	Added, Removed, Changed []string
	// Servers names the servers added, removed or changed; Top the top-level keys that
	// differ.
	Servers, Top []string
	// NowCommented and NoLongerCommented are the cases whose commenting out changed.
	NowCommented, NoLongerCommented []string
}

// Empty reports whether there is no drift.
func (d Drift) Empty() bool {
	return len(d.Added)+len(d.Removed)+len(d.Changed)+len(d.Servers)+len(d.Top)+len(d.NowCommented)+len(d.NoLongerCommented) == 0
}

// Lines says what differs, a line per kind.
func (d Drift) Lines() []string {
	var out []string
	for _, l := range []struct {
		what string
		ids  []string
	}{
		{"cases added", d.Added}, {"cases removed", d.Removed}, {"cases changed", d.Changed},
		{"cases now written commented out", d.NowCommented}, {"cases no longer commented out", d.NoLongerCommented},
		{"servers added, removed or changed", d.Servers}, {"top-level keys changed", d.Top},
	} {
		if len(l.ids) > 0 {
			out = append(out, fmt.Sprintf("%s: %s", l.what, strings.Join(l.ids, ", ")))
		}
	}
	return out
}

// suiteDoc is a suite file as Compare reads it: its YAML data and its commented-out cases.
type suiteDoc struct {
	top       map[string]any
	servers   map[string]any
	cases     map[string]map[string]any
	order     []string
	commented []string
}

var commentedCase = regexp.MustCompile(`(?m)^\s*#\s*- id: (\S+)\s*$`)

func readSuiteDoc(name string, text []byte) (*suiteDoc, error) {
	var top map[string]any
	if err := yaml.Unmarshal(text, &top); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	d := &suiteDoc{top: map[string]any{}, servers: map[string]any{}, cases: map[string]map[string]any{}}
	for k, v := range top {
		switch k {
		case "servers":
			if m, ok := v.(map[string]any); ok {
				d.servers = m
			}
		case "cases":
			list, _ := v.([]any)
			for i, c := range list {
				m, ok := c.(map[string]any)
				id, _ := m["id"].(string)
				if !ok || id == "" {
					return nil, fmt.Errorf("%s: cases[%d] has no id", name, i)
				}
				d.cases[id] = m
				d.order = append(d.order, id)
			}
		default:
			d.top[k] = v
		}
	}
	for _, m := range commentedCase.FindAllSubmatch(text, -1) {
		d.commented = append(d.commented, string(m[1]))
	}
	return d, nil
}

// Compare says how the committed suite (old, named name) differs from the suite the registry
// gives now (now, Write's output).
func Compare(name string, old, now []byte) (Drift, error) {
	o, err := readSuiteDoc(name, old)
	if err != nil {
		return Drift{}, err
	}
	n, err := readSuiteDoc("the registry's suite", now)
	if err != nil {
		return Drift{}, err
	}
	var d Drift
	for _, id := range n.order {
		oc, ok := o.cases[id]
		if !ok {
			d.Added = append(d.Added, id)
			continue
		}
		if keys := changedKeys(oc, n.cases[id]); len(keys) > 0 {
			d.Changed = append(d.Changed, fmt.Sprintf("%s (%s)", id, strings.Join(keys, ", ")))
		}
	}
	for _, id := range o.order {
		if _, ok := n.cases[id]; !ok {
			d.Removed = append(d.Removed, id)
		}
	}
	for _, id := range n.commented {
		if !slices.Contains(o.commented, id) {
			d.NowCommented = append(d.NowCommented, id)
		}
	}
	for _, id := range o.commented {
		if !slices.Contains(n.commented, id) {
			d.NoLongerCommented = append(d.NoLongerCommented, id)
		}
	}
	d.Servers = changedKeys(o.servers, n.servers)
	d.Top = changedKeys(o.top, n.top)
	return d, nil
}

// changedKeys are the keys whose values differ between a and b, one missing in either
// included, in order.
func changedKeys(a, b map[string]any) []string {
	keys := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		if !reflect.DeepEqual(a[k], b[k]) {
			out = append(out, k)
		}
	}
	return out
}
