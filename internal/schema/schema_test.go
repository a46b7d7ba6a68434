package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type inner struct {
	N int `json:"n"`
}

type Embedded struct {
	Lifted string `json:"lifted"`
}

type sample struct {
	Embedded
	Name    string            `json:"name"`
	Opt     string            `json:"opt,omitempty"`
	Ptr     *float64          `json:"ptr,omitempty"`
	List    []inner           `json:"list"`
	Map     map[string]uint16 `json:"map,omitempty"`
	When    time.Time         `json:"when"`
	Skipped string            `json:"-"`
	Untaged bool
	private int //nolint:unused // an unexported field, which the schema must leave out
}

type selfMarshal struct{}

func (selfMarshal) MarshalJSON() ([]byte, error) { return []byte(`1`), nil }

// TestFromTypeWritesWhatEncodingJSONWrites: field names from tags, omitempty fields not
// required, embedded structs lifted, nil-able values nullable, "-" and unexported fields left
// out, named structs under $defs.
func TestFromTypeWritesWhatEncodingJSONWrites(t *testing.T) {
	got, err := FromType("x.json", "x", reflect.TypeFor[sample](), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := &Schema{
		Schema: Draft, ID: "x.json", Title: "x", Type: "object", AdditionalProperties: false,
		Properties: map[string]*Schema{
			"lifted":  {Type: "string"},
			"name":    {Type: "string"},
			"opt":     {Type: "string"},
			"ptr":     {Type: []string{"number", "null"}},
			"list":    {Type: []string{"array", "null"}, Items: &Schema{Ref: "#/$defs/inner"}},
			"map":     {Type: []string{"object", "null"}, AdditionalProperties: &Schema{Type: "integer", Minimum: Ptr(0.0)}},
			"when":    {Type: "string", Format: "date-time"},
			"Untaged": {Type: "boolean"},
		},
		Required: []string{"Untaged", "lifted", "list", "name", "when"},
		Defs: map[string]*Schema{"inner": {Type: "object", AdditionalProperties: false,
			Properties: map[string]*Schema{"n": {Type: "integer"}}, Required: []string{"n"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
	b, err := got.Marshal()
	if err != nil || !json.Valid(b) || !strings.HasSuffix(string(b), "}\n") {
		t.Errorf("Marshal = %q, %v", b, err)
	}
}

// TestFromTypeRefusesWhatItCannotKnow: a type that marshals itself, bytes (base64) and maps
// with non-string keys are errors unless Options.Types gives their schema.
func TestFromTypeRefusesWhatItCannotKnow(t *testing.T) {
	tests := []struct {
		name string
		t    reflect.Type
		want string
	}{
		{"a json.Marshaler", reflect.TypeFor[struct {
			S selfMarshal `json:"s"`
		}](), "marshals itself"},
		{"bytes", reflect.TypeFor[struct {
			B []byte `json:"b"`
		}](), "base64"},
		{"int keys", reflect.TypeFor[struct {
			M map[int]string `json:"m"`
		}](), "map keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromType("x", "x", tt.t, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
	s, err := FromType("x", "x", reflect.TypeFor[struct {
		S selfMarshal `json:"s"`
	}](), Options{Types: map[reflect.Type]func() *Schema{reflect.TypeFor[selfMarshal](): func() *Schema { return &Schema{Type: "integer"} }}})
	if err != nil || s.Properties["s"].Type != "integer" {
		t.Errorf("with Options.Types: %v, %v", s, err)
	}
}

// TestNullableAddsNullToTypeAndEnum: an enum must list null too, or null fails it.
func TestNullableAddsNullToTypeAndEnum(t *testing.T) {
	got := Nullable(&Schema{Type: "string", Enum: []any{"a"}})
	want := &Schema{Type: []string{"string", "null"}, Enum: []any{"a", nil}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := Nullable(&Schema{Ref: "#/$defs/x"}); len(got.AnyOf) != 2 {
		t.Errorf("a $ref: %+v, want anyOf the ref and null", got)
	}
}
