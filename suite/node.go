package suite

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
	"gopkg.in/yaml.v3"
)

// decoder walks a yaml.Node tree strictly (strictdecode.YAML), collecting every problem
// instead of stopping at the first, so that one run of diffusion-check lists all of them.
type decoder struct {
	strictdecode.YAML
	dir string // absolute folder of the suite file, for relative paths
}

// object is a mapping with a fixed set of keys, such as a case or a server.
type object struct {
	d     *decoder
	line  int    // where the mapping starts, for missing keys
	field string // its path, e.g. "cases[2]"
	vals  map[string]strictdecode.Entry
}

// object reads a mapping whose keys must be among allowed; nil after a reported problem.
func (d *decoder) object(raw *yaml.Node, field string, allowed ...string) *object {
	es, ok := d.Entries(raw, field)
	if !ok {
		return nil
	}
	o := &object{d: d, line: raw.Line, field: field, vals: map[string]strictdecode.Entry{}}
	for _, e := range es {
		if !slices.Contains(allowed, e.Name) {
			d.Addf(e.Key.Line, field, "unknown key %q (allowed: %s)", e.Name, strings.Join(allowed, ", "))
			continue
		}
		o.vals[e.Name] = e
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
	if !ok || strictdecode.IsNull(e.Val) {
		return nil, "", false
	}
	return e.Val, strictdecode.Join(o.field, key), true
}

// require reports key as missing when it is absent or empty.
func (o *object) require(key string) (val *yaml.Node, field string, ok bool) {
	val, field, ok = o.get(key)
	if !ok {
		o.d.Addf(o.line, strictdecode.Join(o.field, key), "missing")
	}
	return val, field, ok
}

// lineOf returns the line of key's value, or of the mapping when key is absent.
func (o *object) lineOf(key string) int {
	if e, ok := o.vals[key]; ok {
		return e.Val.Line
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
	n := strictdecode.Deref(v)
	if n.Kind != yaml.ScalarNode {
		o.d.Addf(v.Line, field, "want a duration such as \"90s\" or \"10m\", got %s", strictdecode.Describe(n))
		return false
	}
	t, err := time.ParseDuration(n.Value)
	switch {
	case err != nil:
		o.d.Addf(v.Line, field, "want a duration such as \"90s\" or \"10m\", got %s", strictdecode.Describe(n))
	case t < least && least > 0:
		o.d.Addf(v.Line, field, "must be > 0, got %s", n.Value)
	case t < least:
		o.d.Addf(v.Line, field, "must not be negative, got %s", n.Value)
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
		o.d.Addf(o.lineOf(key), strictdecode.Join(o.field, key), "must not be negative, got %d", v)
	} else {
		o.d.Addf(o.lineOf(key), strictdecode.Join(o.field, key), "must be ≥ %d, got %d", least, v)
	}
	return false
}

// str accepts any scalar as written, so that `gpu: 5090` or an argv element `2` are strings.
func (d *decoder) str(raw *yaml.Node, field string) (string, bool) {
	n := strictdecode.Deref(raw)
	if n.Kind != yaml.ScalarNode {
		d.Addf(raw.Line, field, "want a string, got %s", strictdecode.Describe(n))
		return "", false
	}
	return n.Value, true
}

// integer accepts only YAML integers: a quoted "2" is a string, as in JSON.
func (d *decoder) integer(raw *yaml.Node, field string) (int, bool) {
	n := strictdecode.Deref(raw)
	var v int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil || int64(int(v)) != v {
		d.Addf(raw.Line, field, "want an integer, got %s", strictdecode.Describe(n))
		return 0, false
	}
	return int(v), true
}

func (d *decoder) number(raw *yaml.Node, field string) (float64, bool) {
	n := strictdecode.Deref(raw)
	var v float64
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || n.Decode(&v) != nil {
		d.Addf(raw.Line, field, "want a number, got %s", strictdecode.Describe(n))
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		d.Addf(raw.Line, field, "must be a finite number, got %s", strictdecode.Describe(n))
		return 0, false
	}
	return v, true
}

// boolean accepts only true and false; YAML 1.1's yes/no/on/off are strings in YAML 1.2.
func (d *decoder) boolean(raw *yaml.Node, field string) (bool, bool) {
	n := strictdecode.Deref(raw)
	var v bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&v) != nil {
		d.Addf(raw.Line, field, "want true or false, got %s", strictdecode.Describe(n))
		return false, false
	}
	return v, true
}

// strings reads a list of scalars; nil elements are reported, not skipped, since a missing
// argv element or file is always a mistake.
func (d *decoder) strings(raw *yaml.Node, field string) ([]string, bool) {
	n := strictdecode.Deref(raw)
	if n.Kind != yaml.SequenceNode {
		d.Addf(raw.Line, field, "want a list, got %s", strictdecode.Describe(n))
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for i, el := range n.Content {
		f := fmt.Sprintf("%s[%d]", field, i)
		if strictdecode.IsNull(el) {
			d.Addf(el.Line, f, "empty element")
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
	n := strictdecode.Deref(raw)
	switch n.Kind {
	case yaml.MappingNode:
		es, ok := d.Entries(n, field)
		m := make(map[string]any, len(es))
		for _, e := range es {
			v, valid := d.value(e.Val, strictdecode.Join(field, e.Name))
			ok = ok && valid
			m[e.Name] = v
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
				d.Addf(raw.Line, field, "want an integer, got %s", strictdecode.Describe(n))
				return nil, false
			}
			return v, true
		case "!!float":
			return d.number(raw, field)
		}
		// Strings, and timestamps or custom tags, which JSON can only carry as written.
		return n.Value, true
	}
	d.Addf(raw.Line, field, "want a value, got %s", strictdecode.Describe(n))
	return nil, false
}
