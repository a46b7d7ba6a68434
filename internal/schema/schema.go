package schema

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Draft is the JSON Schema dialect of every schema written here.
const Draft = "https://json-schema.org/draft/2020-12/schema"

// Schema is one JSON Schema. Only the keywords this package writes are fields; Type is a
// string or a list of strings, AdditionalProperties a *Schema or false.
type Schema struct {
	Schema               string             `json:"$schema,omitempty"`
	ID                   string             `json:"$id,omitempty"`
	Ref                  string             `json:"$ref,omitempty"`
	Title                string             `json:"title,omitempty"`
	Description          string             `json:"description,omitempty"`
	Type                 any                `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	Const                any                `json:"const,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	Minimum              *float64           `json:"minimum,omitempty"`
	Maximum              *float64           `json:"maximum,omitempty"`
	MinItems             *int               `json:"minItems,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties any                `json:"additionalProperties,omitempty"`
	PropertyNames        *Schema            `json:"propertyNames,omitempty"`
	AnyOf                []*Schema          `json:"anyOf,omitempty"`
	Not                  *Schema            `json:"not,omitempty"`
	Defs                 map[string]*Schema `json:"$defs,omitempty"`
}

// Marshal writes the schema as indented JSON with a final newline, the form committed under
// docs/schemas/.
func (s *Schema) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("write schema %s: %w", s.ID, err)
	}
	return append(b, '\n'), nil
}

// Ptr is a pointer to v, for Minimum, Maximum and MinItems.
func Ptr[T any](v T) *T { return &v }

// Nullable widens a schema to accept null as well: encoding/json writes a nil pointer,
// slice or map as null.
func Nullable(s *Schema) *Schema {
	if len(s.Enum) > 0 && !slices.Contains(s.Enum, any(nil)) {
		s.Enum = append(s.Enum, nil)
	}
	switch t := s.Type.(type) {
	case string:
		s.Type = []string{t, "null"}
	case []string:
		if !slices.Contains(t, "null") {
			s.Type = append(t, "null")
		}
	default:
		return &Schema{AnyOf: []*Schema{s, {Type: "null"}}}
	}
	return s
}

// Options adjust a reflected schema.
type Options struct {
	// Types replaces the schema of a type: a type with its own MarshalJSON, or a string type
	// whose values are a known set. The function is called once per use.
	Types map[reflect.Type]func() *Schema
}

// FromType is the schema of the JSON that encoding/json writes for a value of type t: each
// named struct becomes a definition under $defs, referred to by $ref; a field without
// omitempty is required; no property beyond the fields is allowed. A type that marshals
// itself (json.Marshaler, encoding.TextMarshaler) must be in opts.Types: its JSON cannot be
// read off its fields, and guessing would be a schema that lies.
func FromType(id, title string, t reflect.Type, opts Options) (*Schema, error) {
	r := &reflector{opts: opts, defs: map[string]*Schema{}, names: map[string]reflect.Type{}}
	root, err := r.of(t)
	if err != nil {
		return nil, err
	}
	// The root is inlined: a file's top level reads best without a $ref.
	if root.Ref != "" {
		name := strings.TrimPrefix(root.Ref, "#/$defs/")
		root = r.defs[name]
		delete(r.defs, name)
	}
	root.Schema, root.ID, root.Title = Draft, id, title
	if len(r.defs) > 0 {
		root.Defs = r.defs
	}
	return root, nil
}

type reflector struct {
	opts  Options
	defs  map[string]*Schema
	names map[string]reflect.Type // definition name → type, to refuse two types of one name
}

var (
	timeType          = reflect.TypeFor[time.Time]()
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

func (r *reflector) of(t reflect.Type) (*Schema, error) {
	if f, ok := r.opts.Types[t]; ok {
		return f(), nil
	}
	if t == timeType {
		return &Schema{Type: "string", Format: "date-time"}, nil
	}
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) ||
		t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return nil, fmt.Errorf("type %s marshals itself; give its schema in Options.Types", t)
	}
	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &Schema{Type: "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &Schema{Type: "integer", Minimum: Ptr(0.0)}, nil
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: "number"}, nil
	case reflect.String:
		return &Schema{Type: "string"}, nil
	case reflect.Interface:
		return &Schema{}, nil // any JSON value
	case reflect.Pointer:
		s, err := r.of(t.Elem())
		if err != nil {
			return nil, err
		}
		return Nullable(s), nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, fmt.Errorf("type %s: encoding/json writes bytes as base64; give its schema in Options.Types", t)
		}
		items, err := r.of(t.Elem())
		if err != nil {
			return nil, err
		}
		s := &Schema{Type: "array", Items: items}
		if t.Kind() == reflect.Slice {
			s = Nullable(s)
		}
		return s, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("type %s: map keys other than strings are not written here", t)
		}
		v, err := r.of(t.Elem())
		if err != nil {
			return nil, err
		}
		return Nullable(&Schema{Type: "object", AdditionalProperties: v}), nil
	case reflect.Struct:
		return r.structOf(t)
	}
	return nil, fmt.Errorf("type %s: kind %s has no JSON form", t, t.Kind())
}

// structOf is a reference to the definition of a named struct (an anonymous one is inlined).
func (r *reflector) structOf(t reflect.Type) (*Schema, error) {
	name := t.Name()
	if name == "" {
		return r.object(t)
	}
	if other, ok := r.names[name]; ok && other != t {
		return nil, fmt.Errorf("two types named %s (%s, %s): their definitions would collide", name, other.PkgPath(), t.PkgPath())
	}
	ref := &Schema{Ref: "#/$defs/" + name}
	if _, done := r.names[name]; done {
		return ref, nil
	}
	r.names[name] = t
	s, err := r.object(t)
	if err != nil {
		return nil, err
	}
	r.defs[name] = s
	return ref, nil
}

// object is a struct's properties, as encoding/json writes them.
func (r *reflector) object(t reflect.Type) (*Schema, error) {
	s := &Schema{Type: "object", Properties: map[string]*Schema{}, AdditionalProperties: false}
	if err := r.fields(t, s); err != nil {
		return nil, err
	}
	slices.Sort(s.Required)
	return s, nil
}

func (r *reflector) fields(t reflect.Type, s *Schema) error {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, flags, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				// encoding/json lifts an embedded struct's fields into the outer object.
				if err := r.fields(ft, s); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if slices.Contains(strings.Split(flags, ","), "string") {
			return fmt.Errorf("%s.%s: the ,string option is not written here", t, f.Name)
		}
		p, err := r.of(f.Type)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		s.Properties[name] = p
		if !slices.Contains(strings.Split(flags, ","), "omitempty") && !slices.Contains(strings.Split(flags, ","), "omitzero") {
			s.Required = append(s.Required, name)
		}
	}
	return nil
}
