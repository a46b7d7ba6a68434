package suite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// compiledSchema is JSONSchema compiled by an independent validator (draft 2020-12).
func compiledSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	b, err := JSONSchema().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaID, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(SchemaID)
	if err != nil {
		t.Fatalf("compile the suite schema: %v", err)
	}
	return s
}

// yamlInstance is a YAML document as the JSON value an editor's YAML language server
// validates: YAML 1.2's core types, aliases and merge keys expanded.
func yamlInstance(data []byte) (any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	v, err := yamlValue(doc.Content[0])
	if err != nil {
		return nil, err
	}
	// Through JSON, so that numbers are what the validator reads from a JSON file.
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

func yamlValue(n *yaml.Node) (any, error) {
	n = strictdecode.Deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		var merges []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := strictdecode.Deref(n.Content[i])
			if k.ShortTag() == "!!merge" {
				merges = append(merges, n.Content[i+1])
				continue
			}
			v, err := yamlValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		for _, mn := range merges {
			sources := []*yaml.Node{mn}
			if strictdecode.Deref(mn).Kind == yaml.SequenceNode {
				sources = strictdecode.Deref(mn).Content
			}
			for _, src := range sources {
				v, err := yamlValue(src)
				if err != nil {
					return nil, err
				}
				mm, ok := v.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("line %d: merge of a non-mapping", src.Line)
				}
				for k, v := range mm {
					if _, set := m[k]; !set {
						m[k] = v
					}
				}
			}
		}
		return m, nil
	case yaml.SequenceNode:
		s := []any{}
		for _, el := range n.Content {
			v, err := yamlValue(el)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.ScalarNode:
		var v any
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool":
			var b bool
			err := n.Decode(&b)
			v = b
			return v, err
		case "!!int":
			var i int64
			err := n.Decode(&i)
			return i, err
		case "!!float":
			var f float64
			err := n.Decode(&f)
			return f, err
		}
		return n.Value, nil
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

// validSuite is a small suite that the decoder accepts, with every object of the key table
// present, for TestSuiteSchemaRejectsWhatTheLoaderRejects to break one key at a time.
func validSuite() map[string]any {
	return map[string]any{
		"ground_truth": map[string]any{
			"repo": "https://github.com/sgl-project/ci-data-diffusion", "commit": "15b30030ef980756788ab40072f9223fe21a5526",
			"path": "diffusion-ci/consistency_gt",
		},
		"servers": map[string]any{"ref": map[string]any{"builtin": map[string]any{}, "ready": map[string]any{},
			"imports": map[string]any{"modules": []any{"app.serve"}, "dynamic": []any{map[string]any{"module": "app.registry", "loads": "outside"}}}},
			"batch": map[string]any{"builtin": map[string]any{"batching_max_size": 2}}},
		"cases": []any{map[string]any{
			"id": "a", "server": "ref", "modality": "image",
			"request": map[string]any{"size": "8x8"}, "checks": map[string]any{}, repeatObject: map[string]any{}, loraObject: map[string]any{},
		}, map[string]any{
			"id": "b", "server": "ref", "modality": "video", "request": map[string]any{"size": "8x8"},
			"realtime": map[string]any{"num_chunks": 2, "thresholds": map[string]any{"p95_chunk_total_ms": 5000}},
		}, map[string]any{
			"id": "c", "server": "batch", "modality": "image", "request": map[string]any{"size": "8x8"},
			batchingObject: map[string]any{"requests": []any{map[string]any{"prompt": "a", "size": "8x8"}, map[string]any{"prompt": "b", "size": "8x8"}}},
		}},
	}
}

// objectIn returns the mapping of one key-table object inside a validSuite.
func objectIn(s map[string]any, object string) map[string]any {
	server := s["servers"].(map[string]any)["ref"].(map[string]any)
	c := s["cases"].([]any)[0].(map[string]any)
	switch object {
	case suiteObject:
		return s
	case serverObject:
		return server
	case builtinObject:
		return server["builtin"].(map[string]any)
	case readyObject:
		return server["ready"].(map[string]any)
	case caseObject:
		return c
	case requestObject:
		return c["request"].(map[string]any)
	case checksObject:
		return c["checks"].(map[string]any)
	case repeatObject:
		return c[repeatObject].(map[string]any)
	case realtimeObject:
		return s["cases"].([]any)[1].(map[string]any)["realtime"].(map[string]any)
	case importsObject:
		return server["imports"].(map[string]any)
	case dynamicObject:
		return server["imports"].(map[string]any)["dynamic"].([]any)[0].(map[string]any)
	case groundTruthObject:
		return s["ground_truth"].(map[string]any)
	case loraObject:
		return c[loraObject].(map[string]any)
	case batchingObject:
		return s["cases"].([]any)[2].(map[string]any)[batchingObject].(map[string]any)
	}
	return nil
}

// brokenValues are values of a key that the decoder must refuse, named for the subtest:
// a value of the wrong type, and one past each limit the key table sets.
func brokenValues(k key) map[string]any {
	wrongType := map[valueKind]any{
		scalarValue: map[string]any{"x": 1}, intValue: "x", numberValue: "x", boolValue: "yes",
		durationValue: "ten minutes", listValue: map[string]any{"x": 1}, envValue: "x", anyMapping: "x",
		objectValue: "x", namedObjects: "x", objectList: "x", numberMap: "x", scalarOrObject: []any{"x"},
	}
	out := map[string]any{"wrong type": wrongType[k.kind]}
	if len(k.enum) > 0 {
		out["not in the enum"] = "nope"
	}
	if k.kind == numberMap {
		out["not in the enum"] = map[string]any{"nope": 1}
		out["not a number"] = map[string]any{k.enum[0]: "x"}
	}
	if k.pattern != "" {
		out["not matching the pattern"] = "-bad x"
	}
	if k.least != nil {
		out["below the least"] = *k.least - 1
	}
	if k.most != nil {
		out["above the most"] = *k.most + 1
	}
	if k.positive {
		out["zero duration"] = "0s"
	}
	if k.minItems > 0 {
		out["too few items"] = []any{}
	}
	if k.required {
		out["null"] = nil
	}
	return out
}

// TestSuiteSchemaRejectsWhatTheLoaderRejects breaks every key of the key table in every way
// the table constrains it (wrong type, outside the enum or pattern, past a limit, a required
// key missing or null, an unknown key): the decoder rejects each suite, and so does the
// JSON Schema, checked by an independent validator.
func TestSuiteSchemaRejectsWhatTheLoaderRejects(t *testing.T) {
	sch := compiledSchema(t)
	dir := t.TempDir()
	check := func(t *testing.T, s map[string]any) {
		t.Helper()
		data, err := yaml.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(filepath.Join(dir, "suite.yaml"), data); err == nil {
			t.Fatalf("the loader accepts the broken suite:\n%s", data)
		}
		inst, err := yamlInstance(data)
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err == nil {
			t.Errorf("the loader rejects this suite, the schema accepts it:\n%s", data)
		}
	}
	t.Run("the valid suite is valid", func(t *testing.T) {
		data, _ := yaml.Marshal(validSuite())
		if _, err := Parse(filepath.Join(dir, "suite.yaml"), data); err != nil {
			t.Fatal(err)
		}
		inst, err := yamlInstance(data)
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Fatal(err)
		}
	})
	n := 0
	for object, keys := range keyTable() {
		t.Run(object+".unknown key", func(t *testing.T) {
			s := validSuite()
			objectIn(s, object)["no_such_key"] = 1
			check(t, s)
		})
		for _, k := range keys {
			for how, v := range brokenValues(k) {
				n++
				t.Run(object+"."+k.name+": "+how, func(t *testing.T) {
					s := validSuite()
					objectIn(s, object)[k.name] = v
					check(t, s)
				})
			}
			if k.required {
				t.Run(object+"."+k.name+": missing", func(t *testing.T) {
					s := validSuite()
					delete(objectIn(s, object), k.name)
					check(t, s)
				})
			}
		}
	}
	rows := []struct {
		name string
		edit func(s map[string]any)
	}{
		{"an env variable the runner sets", func(s map[string]any) {
			objectIn(s, serverObject)["env"] = map[string]any{perfLogEnv: "x"}
		}},
		{"both builtin and command", func(s map[string]any) {
			objectIn(s, serverObject)["command"] = []any{"srv", "--port", "{port}"}
		}},
		{"neither builtin nor command", func(s map[string]any) { delete(objectIn(s, serverObject), "builtin") }},
		{"a server name that cannot be a folder", func(s map[string]any) {
			s["servers"] = map[string]any{"a/b": map[string]any{"builtin": nil}}
		}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			s := validSuite()
			r.edit(s)
			check(t, s)
		})
	}
	if n < 60 {
		t.Errorf("only %d broken values made from the key table; is it empty?", n)
	}
}

// TestSuiteSchemaAcceptsEmptyValues: `key:` with no value means the default, to the loader
// and to the schema alike, for every optional key the table has.
func TestSuiteSchemaAcceptsEmptyValues(t *testing.T) {
	sch := compiledSchema(t)
	dir := t.TempDir()
	for object, keys := range keyTable() {
		for _, k := range keys {
			if k.required {
				continue
			}
			t.Run(object+"."+k.name, func(t *testing.T) {
				s := validSuite()
				objectIn(s, object)[k.name] = nil
				data, err := yaml.Marshal(s)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := Parse(filepath.Join(dir, "suite.yaml"), data); err != nil {
					t.Skipf("the loader rejects it too: %v", err) // e.g. servers: with no server for the case
				}
				inst, err := yamlInstance(data)
				if err != nil {
					t.Fatal(err)
				}
				if err := sch.Validate(inst); err != nil {
					t.Errorf("the loader accepts this suite, the schema does not: %v\n%s", err, data)
				}
			})
		}
	}
}

// TestSuiteSchemaAcceptsEverySuiteTheLoaderAccepts validates every suite of the repository
// that the loader accepts (the examples, the loader's own test data, and the suites of the
// CLI's testscripts, each with the archive's other files beside it) against the schema.
func TestSuiteSchemaAcceptsEverySuiteTheLoaderAccepts(t *testing.T) {
	sch := compiledSchema(t)
	var files []string
	for _, pattern := range []string{"../examples/*/*.yaml", "../examples/*/*/*.yaml", "testdata/*.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	archives, err := filepath.Glob("../cmd/diffusion-check/testdata/script/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range archives {
		ar, err := txtar.ParseFile(a)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(a), ".txtar"))
		for _, f := range ar.Files {
			p := filepath.Join(dir, f.Name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(f.Name, ".yaml") {
				files = append(files, p)
			}
		}
	}
	accepted := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var top map[string]any
		if yaml.Unmarshal(data, &top) != nil || top["cases"] == nil {
			continue // not a suite: a baseline, thresholds or known-failures file
		}
		if _, err := Load(f); err != nil {
			continue // the loader's rejections are TestSuiteSchemaRejectsWhatTheLoaderRejects's
		}
		accepted++
		inst, err := yamlInstance(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s: the loader accepts it, the schema does not:\n%v", f, err)
		}
	}
	if accepted < 30 {
		t.Errorf("only %d suites accepted by the loader were found; the search paths are wrong", accepted)
	}
	t.Logf("%d suites the loader accepts, all valid under the schema", accepted)
}

// TestSuiteKeysAreAllRead: every key of the key table is read by the decoder. A key allowed
// but never read would be accepted and silently ignored; a wrong value shows it is read.
// (TestSuiteSchemaRejectsWhatTheLoaderRejects breaks each key on its own, so a key the
// decoder ignored would make the loader accept its broken suite there.)
func TestSuiteKeysAreAllRead(t *testing.T) {
	for object, keys := range keyTable() {
		if len(keys) == 0 {
			t.Errorf("object %s has no keys", object)
		}
		for _, k := range keys {
			if (k.kind == objectValue || k.kind == namedObjects || k.kind == objectList || k.kind == scalarOrObject) && keyTable()[k.object] == nil {
				t.Errorf("%s.%s: object %q is not in the table", object, k.name, k.object)
			}
			if s := valueSchema(k); s.Type == nil && s.Ref == "" && s.AnyOf == nil {
				t.Errorf("%s.%s: no schema for its kind %d", object, k.name, k.kind)
			}
		}
	}
}

// TestSuiteKeysAreDocumented: every key of the key table has a row in a table of
// docs/suite.md, so that the reference cannot lag the loader.
func TestSuiteKeysAreDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/suite.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| `") {
			rows = append(rows, strings.Split(line, "|")[1])
		}
	}
	for object, keys := range keyTable() {
		for _, k := range keys {
			found := false
			for _, r := range rows {
				found = found || strings.Contains(r, "`"+k.name+"`")
			}
			if !found {
				t.Errorf("%s key %s has no row in docs/suite.md", object, k.name)
			}
		}
	}
}
