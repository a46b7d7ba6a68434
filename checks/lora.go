package checks

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/diffusion-check/diffusion-check/results"
)

// The LoRA checks of SGLang's harness, each switched on by its case flag and off by default
// (testcase_configs.py DiffusionTestCase: run_lora_basic_api_check,
// run_lora_dynamic_load_check, run_lora_dynamic_switch_check, run_multi_lora_api_check;
// test_server_common.py _test_lora_api_functionality, _test_dynamic_lora_loading,
// _test_lora_dynamic_switch_e2e, _test_multi_lora_e2e, pandalee99/sglang @ cce0a1244,
// 2026-08-23). Each is a sequence of steps, API calls to the server's LoRA endpoints and
// generations after them, and stops at its first failed step as SGLang's asserts do.
const (
	LoRABasicAPI      = "lora.basic_api"
	LoRADynamicLoad   = "lora.dynamic_load"
	LoRADynamicSwitch = "lora.dynamic_switch"
	LoRAMulti         = "lora.multi_lora"
)

// LoRAStep is one step of a LoRA check as the runner made it: an API call and its answer,
// or a generation and what became of it.
type LoRAStep struct {
	// Call is the API call as SGLang's harness makes it ("POST /v1/set_lora
	// {"lora_nickname": "default"}"), Answer its answer. For GET /v1/list_loras, Loaded is
	// the nickname the answer's loaded_adapters must hold.
	Call   string
	Answer Answer
	Loaded string
	// Generation names a generation by what it follows ("after merge_lora_weights");
	// Failed says why it made no output ("" when it did), and Consistency holds the
	// comparison of its output with the case's ground truth where SGLang makes one
	// (_validate_lora_consistency): none when it is not compared.
	Generation  string
	Failed      string
	Consistency []results.Check
}

// Problem is why the step fails, "" when it passes: a call that got no answer or not 200
// (SGLang's assert resp.status_code == 200, with the answer's text), a list_loras whose
// loaded_adapters is empty or lacks the nickname, a generation without output, or a
// comparison with the ground truth that failed.
func (s LoRAStep) Problem() string {
	if s.Generation != "" {
		if s.Failed != "" {
			return fmt.Sprintf("generation %s failed: %s", s.Generation, s.Failed)
		}
		for _, c := range s.Consistency {
			if c.Status == results.Fail || c.Status == results.Error {
				d, _, _ := strings.Cut(c.Detail, "\n")
				return fmt.Sprintf("generation %s: %s %s: %s", s.Generation, c.Name, c.Status, d)
			}
		}
		return ""
	}
	switch a := s.Answer; {
	case a.Err != nil:
		return fmt.Sprintf("%s: %v", s.Call, a.Err)
	case a.Status != 200:
		return fmt.Sprintf("%s failed: %d %s", s.Call, a.Status, snippet(a.Body))
	}
	if s.Loaded == "" {
		return ""
	}
	var status struct {
		Loaded []struct {
			Nickname string `json:"nickname"`
		} `json:"loaded_adapters"`
	}
	if err := json.Unmarshal(s.Answer.Body, &status); err != nil {
		return fmt.Sprintf("%s: not the adapters' status: %v", s.Call, err)
	}
	if len(status.Loaded) == 0 {
		return fmt.Sprintf("%s: loaded_adapters should be a non-empty list, got %s", s.Call, snippet(s.Answer.Body))
	}
	for _, a := range status.Loaded {
		if a.Nickname == s.Loaded {
			return ""
		}
	}
	return fmt.Sprintf("%s: nickname '%s' not found in loaded_adapters: %s", s.Call, s.Loaded, snippet(s.Answer.Body))
}

// what names the step in a summary: the call, or the generation with its comparison.
func (s LoRAStep) what() string {
	switch {
	case s.Generation == "":
		return s.Call
	case s.Consistency == nil:
		return "generation " + s.Generation
	}
	compared := "not compared with the ground truth"
	for _, c := range s.Consistency {
		if c.Status == results.Pass {
			compared = "matches the ground truth"
			break
		}
		if c.Status == results.Skip {
			d, _, _ := strings.Cut(c.Detail, "\n")
			compared = "not compared: " + d
		}
	}
	return fmt.Sprintf("generation %s (%s)", s.Generation, compared)
}

// LoRA is the verdict of the LoRA check name over the steps the runner made, which end at
// the first failed one: it fails with that step's problem, and the cause names the check;
// it passes listing the steps. A check whose steps the runner could not start (the run was
// cancelled) is cancelled.
func LoRA(name string, steps []LoRAStep, cancelled bool) results.Check {
	c := results.Check{Name: name, Status: results.Pass}
	for i, s := range steps {
		if p := s.Problem(); p != "" {
			c.Status, c.Cause = results.Fail, strings.TrimPrefix(name, "lora.")+" LoRA check"
			c.Detail = fmt.Sprintf("step %d of %s: %s", i+1, name, p)
			return c
		}
	}
	if cancelled {
		c.Status, c.Detail = results.Cancelled, fmt.Sprintf("run cancelled after %d steps", len(steps))
		return c
	}
	var what []string
	for _, s := range steps {
		what = append(what, s.what())
	}
	c.Detail = strings.Join(what, "; ")
	return c
}
