package checks

import (
	"errors"
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/results"
)

// TestLoRAStepProblems: each kind of step fails as SGLang's assert does, naming the call and
// the answer, or the generation and why; a check fails at its first failed step, passes
// listing its steps, and is cancelled when the run was.
func TestLoRAStepProblems(t *testing.T) {
	ok := Answer{Status: 200, Body: []byte(`{"status":"ok"}`)}
	list := func(body string) Answer { return Answer{Status: 200, Body: []byte(body)} }
	for _, tc := range []struct {
		name string
		step LoRAStep
		want string
	}{
		{"a call answered", LoRAStep{Call: "POST /v1/merge_lora_weights", Answer: ok}, ""},
		{"a call refused", LoRAStep{Call: `POST /v1/set_lora {"lora_nickname":"default"}`,
			Answer: Answer{Status: 500, Body: []byte(`{"detail":"Failed to set LoRA adapter: boom"}`)}},
			`POST /v1/set_lora {"lora_nickname":"default"} failed: 500 "{\"detail\":\"Failed to set LoRA adapter: boom\"}"`},
		{"no answer", LoRAStep{Call: "POST /v1/unmerge_lora_weights", Answer: Answer{Err: errors.New("connection refused")}},
			"POST /v1/unmerge_lora_weights: connection refused"},
		{"the adapter listed", LoRAStep{Call: "GET /v1/list_loras", Loaded: "default",
			Answer: list(`{"loaded_adapters":[{"nickname":"default","path":"a/b"}],"active":{}}`)}, ""},
		{"no adapter listed", LoRAStep{Call: "GET /v1/list_loras", Loaded: "default", Answer: list(`{"loaded_adapters":[],"active":{}}`)},
			"GET /v1/list_loras: loaded_adapters should be a non-empty list"},
		{"another adapter listed", LoRAStep{Call: "GET /v1/list_loras", Loaded: "default", Answer: list(`{"loaded_adapters":[{"nickname":"lora2"}]}`)},
			"GET /v1/list_loras: nickname 'default' not found in loaded_adapters"},
		{"a generation", LoRAStep{Generation: "after merge_lora_weights"}, ""},
		{"a generation without output", LoRAStep{Generation: "after set_lora", Failed: "server answered 500"},
			"generation after set_lora failed: server answered 500"},
		{"a generation unlike the ground truth", LoRAStep{Generation: "after switching back", Consistency: []results.Check{
			{Name: ConsistencySSIM, Status: results.Fail, Detail: "0.71 < 0.92\nmore"}}},
			"generation after switching back: consistency.ssim fail: 0.71 < 0.92"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.step.Problem(); got != tc.want && (tc.want == "" || !strings.HasPrefix(got, tc.want)) {
				t.Errorf("Problem() = %q, want %q", got, tc.want)
			}
		})
	}

	steps := []LoRAStep{{Call: "POST /v1/unmerge_lora_weights", Answer: ok}, {Generation: "after unmerge_lora_weights"},
		{Call: "POST /v1/merge_lora_weights", Answer: Answer{Status: 500, Body: []byte("no")}}}
	c := LoRA(LoRABasicAPI, steps, false)
	if c.Status != results.Fail || c.Detail != `step 3 of lora.basic_api: POST /v1/merge_lora_weights failed: 500 "no"` || c.Cause == "" {
		t.Errorf("a failed step: %+v", c)
	}
	c = LoRA(LoRABasicAPI, steps[:2], false)
	if c.Status != results.Pass || c.Detail != "POST /v1/unmerge_lora_weights; generation after unmerge_lora_weights" {
		t.Errorf("every step passed: %+v", c)
	}
	if c := LoRA(LoRAMulti, steps[:1], true); c.Status != results.Cancelled {
		t.Errorf("cancelled: %+v", c)
	}
	if k := KindOf(LoRAMulti); !k.Registered || k.Group != GroupServer {
		t.Errorf("lora.multi_lora is not registered in the server group: %+v", k)
	}
}
