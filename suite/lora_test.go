package suite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLoRAKeys: a case's lora block, its path read from the server's --lora-path (a builtin's
// lora_path) when the case does not say; what SGLang's DiffusionTestCase.__post_init__ refuses
// (a check without its adapters) is refused at load, naming file and line, and so are a path
// that is not the server's and requests at once beside checks that change the adapters.
func TestLoRAKeys(t *testing.T) {
	head := `servers:
  ref: {builtin: {lora_path: a/first}}
  sg: {command: [sglang, serve, --model-path, M/m, --port, "{port}", --lora-path, s/first]}
cases:
`
	s, err := Parse(filepath.Join(t.TempDir(), "suite.yaml"), []byte(head+
		`  - {id: a, server: ref, modality: image, request: {}, lora: {second_path: b/second, basic_api: true, multi_lora: true}}
  - {id: b, server: sg, modality: image, request: {}, lora: {dynamic_switch: true, second_path: b/second}}
  - {id: c, server: ref, modality: image, request: {}, lora: {dynamic_path: d/dyn, dynamic_load: true}}
  - {id: d, server: ref, modality: image, request: {}}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []*LoRA{
		{Path: "a/first", SecondPath: "b/second", BasicAPI: true, Multi: true},
		{Path: "s/first", SecondPath: "b/second", DynamicSwitch: true},
		{Path: "a/first", DynamicPath: "d/dyn", DynamicLoad: true},
		nil,
	}
	for i, w := range want {
		if d := cmp.Diff(w, s.Cases[i].LoRA); d != "" {
			t.Errorf("case %s (-want +got):\n%s", s.Cases[i].ID, d)
		}
	}
	if !s.Cases[0].LoRA.PerRequest() || s.Cases[2].LoRA.PerRequest() || !s.Cases[2].LoRA.ChangesAdapters() || s.Cases[3].LoRA.ChangesAdapters() {
		t.Error("PerRequest or ChangesAdapters says otherwise")
	}

	bad := `servers:
  ref: {builtin: {}}
  started: {builtin: {lora_path: a/first}}
cases:
  - {id: a, server: ref, modality: image, request: {}, lora: {basic_api: true}}
  - {id: b, server: ref, modality: image, request: {}, lora: {dynamic_load: true, dynamic_switch: true, multi_lora: true, path: x}}
  - {id: c, server: started, modality: image, request: {}, lora: {path: other}}
  - {id: d, server: started, modality: image, repeat: 2, concurrency: 2, request: {}, lora: {basic_api: true}}
`
	_, err = Parse(filepath.Join(t.TempDir(), "suite.yaml"), []byte(bad))
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{
		"suite.yaml:5: cases[0].lora.basic_api: basic_api requires path (or the server's --lora-path) or dynamic_path (as SGLang's DiffusionTestCase refuses it)",
		"suite.yaml:6: cases[1].lora.dynamic_load: dynamic_load requires dynamic_path",
		"suite.yaml:6: cases[1].lora.dynamic_switch: dynamic_switch requires second_path",
		"suite.yaml:6: cases[1].lora.multi_lora: multi_lora requires path (or the server's --lora-path) and second_path",
		`suite.yaml:7: cases[2].lora.path: the server started starts with the adapter "a/first" (--lora-path), got "other"`,
		"suite.yaml:8: cases[3].concurrency: must be 1 with lora checks after each request",
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error lacks %q:\n%v", w, err)
		}
	}
}
