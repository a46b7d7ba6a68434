package checks

import (
	"fmt"
	"strings"

	"github.com/diffusion-check/diffusion-check/results"
)

// OutputRevisedPrompt is SGLang's run_revised_prompt_check on an image request of a thinking
// model (BAGEL): every image's revised_prompt is the input prompt, a newline and a non-empty
// plan, so that a server that fell back to echoing the prompt fails (test_server_utils.py
// get_generate_fn; the rules as its unit tests state them, test_bagel_revised_prompt,
// read through the search index: the function itself could not be read).
const OutputRevisedPrompt = "output.revised_prompt"

// RevisedPrompt checks the revised_prompt of each image of a response (nil for an image
// whose answer had none) against the prompt sent, with SGLang's four rules in its order:
// non-empty, different from the prompt, the prompt and a newline first, a non-empty planning
// suffix. The first image that breaks one fails the check, naming it and its value.
func RevisedPrompt(prompt string, revised []*string) results.Check {
	c := results.Check{Name: OutputRevisedPrompt, Status: results.Pass}
	if len(revised) == 0 {
		c.Status, c.Detail, c.Cause = results.Fail, "revised_prompt must be non-empty: the response has no image data", "revised_prompt fell back"
		return c
	}
	for i, r := range revised {
		if why := revisedProblem(prompt, r); why != "" {
			got := "null"
			if r != nil {
				got = snippet([]byte(*r))
			}
			c.Status, c.Cause = results.Fail, "revised_prompt fell back"
			c.Detail = fmt.Sprintf("image %d of %d: %s (revised_prompt %s)", i+1, len(revised), why, got)
			return c
		}
	}
	c.Detail = fmt.Sprintf("%d revised prompt(s): the prompt, then the model's plan", len(revised))
	return c
}

// revisedProblem is the first of SGLang's rules r breaks, "" for none.
func revisedProblem(prompt string, r *string) string {
	switch {
	case r == nil || strings.TrimSpace(*r) == "":
		return "revised_prompt must be non-empty"
	case *r == prompt:
		return "revised_prompt must differ from the input prompt"
	case !strings.HasPrefix(*r, prompt+"\n"):
		return "revised_prompt must start with the input prompt followed by a newline"
	case strings.TrimSpace(strings.TrimPrefix(*r, prompt+"\n")) == "":
		return "revised_prompt must include a non-empty planning suffix"
	}
	return ""
}
