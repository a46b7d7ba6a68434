package checks

import (
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/results"
)

// TestRevisedPromptRules: SGLang's unit tests of run_revised_prompt_check, case by case: a
// plan after the prompt and a newline passes; none, blank, the prompt itself, another text, or
// the prompt and a newline with nothing after fail, each with SGLang's words.
func TestRevisedPromptRules(t *testing.T) {
	const prompt = "A small blue robot holding a red flower."
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		name    string
		revised []*string
		want    string
	}{
		{"a plan", []*string{s(prompt + "\n<think>Use a centered subject.</think>")}, ""},
		{"none", []*string{nil}, "revised_prompt must be non-empty"},
		{"blank", []*string{s("  ")}, "revised_prompt must be non-empty"},
		{"the prompt", []*string{s(prompt)}, "revised_prompt must differ from the input prompt"},
		{"another text", []*string{s("An unrelated rewritten prompt.")}, "revised_prompt must start with the input prompt followed by a newline"},
		{"no plan", []*string{s(prompt + "\n   ")}, "revised_prompt must include a non-empty planning suffix"},
		{"the second image", []*string{s(prompt + "\nplan"), s(prompt)}, "image 2 of 2: revised_prompt must differ from the input prompt"},
		{"no image", nil, "revised_prompt must be non-empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := RevisedPrompt(prompt, tc.revised)
			switch {
			case tc.want == "" && c.Status != results.Pass:
				t.Errorf("got %+v, want a pass", c)
			case tc.want != "" && (c.Status != results.Fail || !strings.Contains(c.Detail, tc.want)):
				t.Errorf("got %+v, want a failure saying %q", c, tc.want)
			}
		})
	}
}
