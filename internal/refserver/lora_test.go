package refserver

import (
	"strings"
	"testing"
)

// TestLoRAAPIAnswersAsSGLang: set_lora loads and applies, list_loras lists what is loaded and
// applied, merge and unmerge answer SGLang's messages; what SGLang refuses (an adapter not
// loaded and given no path, lists of another length, an unknown target, no nickname) is
// refused with its status and message; and the output shows the adapters applied: back on the
// first adapter it is the same as before the switch.
func TestLoRAAPIAnswersAsSGLang(t *testing.T) {
	ts := start(t, Config{LoraPath: "a/first"})
	gen := func() string {
		t.Helper()
		st, b := ts.postJSON(t, "/v1/images/generations", map[string]any{"prompt": "a fox", "size": "32x32", "num_inference_steps": 1, "seed": 3})
		if st != 200 {
			t.Fatalf("generation: %d %s", st, b)
		}
		return string(b[strings.Index(string(b), `"b64_json"`):][:200])
	}
	first := gen()
	for _, tc := range []struct {
		path string
		body any
		code int
		want string
	}{
		{"/v1/list_loras", nil, 200, `"loaded_adapters":[{"nickname":"default","path":"a/first"}]`},
		{"/v1/set_lora", map[string]any{"lora_nickname": "lora2", "lora_path": "b/second"}, 200,
			`"message":"Successfully set LoRA adapter(s): lora2 (target: all, strength: 1.00)"`},
		{"/v1/set_lora", map[string]any{"lora_nickname": "nope"}, 500,
			`Failed to set LoRA adapter: Adapter nope not found in the pipeline. Please provide lora_path to load it.`},
		{"/v1/set_lora", map[string]any{"lora_nickname": []string{"default", "lora2"}, "lora_path": []string{"a/first"}}, 500,
			"lora_path has 1 entries, lora_nickname 2"},
		{"/v1/set_lora", map[string]any{"lora_nickname": "default", "target": "vae"}, 500, "Invalid target(s): ['vae']"},
		{"/v1/set_lora", map[string]any{"lora_path": "x"}, 422, `"loc":["body","lora_nickname"]`},
		{"/v1/set_lora", map[string]any{"lora_nickname": []string{"default", "lora2"}, "lora_path": []string{"a/first", "b/second"},
			"target": []string{"transformer", "transformer_2"}, "strength": []float64{0.6, 0.35}}, 200,
			"Successfully set LoRA adapter(s): default, lora2 (target: transformer, transformer_2, strength: 0.60, 0.35)"},
		{"/v1/list_loras", nil, 200, `"loaded_adapters":[{"nickname":"default","path":"a/first"},{"nickname":"lora2","path":"b/second"}]`},
		{"/v1/unmerge_lora_weights", nil, 200, "Successfully unmerged LoRA weights (target: all)"},
		{"/v1/merge_lora_weights", map[string]any{"strength": 0.5}, 200, "Successfully merged LoRA weights (target: all, strength: 0.5)"},
		{"/v1/set_lora", map[string]any{"lora_nickname": "default"}, 200, "Successfully set LoRA adapter(s): default"},
	} {
		var st int
		var b []byte
		if tc.body == nil && strings.HasSuffix(tc.path, "list_loras") {
			st, b = ts.call(t, "GET", tc.path, "", nil)
		} else {
			st, b = ts.postJSON(t, tc.path, tc.body)
		}
		if st != tc.code || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s %v: %d %s, want %d with %q", tc.path, tc.body, st, b, tc.code, tc.want)
		}
	}
	if again := gen(); again != first {
		t.Error("back on the first adapter, the output is not the one it made before the switch")
	}
	ts.postJSON(t, "/v1/set_lora", map[string]any{"lora_nickname": "lora2"})
	if other := gen(); other == first {
		t.Error("on the second adapter, the output is the first adapter's")
	}
	ts.postJSON(t, "/v1/unmerge_lora_weights", nil)
	if base := gen(); base == first {
		t.Error("unmerged, the output is the first adapter's")
	}
}
