package suite

import (
	"slices"

	"github.com/diffusion-check/diffusion-check/internal/strictdecode"
)

// A text case (modality text) is SGLang's test of a text-generating diffusion model
// (test_server_common.py _test_diffusion_generation_impl: a task type whose is_text_gen()
// holds runs _test_chat_completion_smoke and nothing else, read through the search index at a
// commit newer than pandalee99/sglang @ cce0a1244): each request is one POST
// /v1/chat/completions with the case's prompt and one image, and its check is
// output.chat_completion (checks.ChatCompletion). It has no media, no perf record, no ground
// truth: the checks of those are off, and a case that turns one on is refused.

// textRequestKeys are the request keys a text case takes: SGLang's smoke sends the prompt and
// one image URL (a file of the checkout is sent as a data: URL), and extra fields merge into
// the body as OpenAI's extra_body.
var textRequestKeys = []string{"prompt", "images", "extra"}

// caseText refuses what a text case cannot have, and turns off the checks that do not apply.
func (d *decoder) caseText(o *object, field string, c *Case) {
	if c.Modality != Text {
		return
	}
	if v, f, ok := o.get("request"); ok {
		if es, ok := d.Entries(v, f); ok {
			for _, e := range es {
				if !slices.Contains(textRequestKeys, e.Name) {
					d.Addf(e.Key.Line, strictdecode.Join(f, e.Name),
						"a text case sends a prompt and one image (SGLang's chat smoke): %s applies to image and video cases", e.Name)
				}
			}
		}
		if c.Request.Prompt == "" {
			d.Addf(v.Line, strictdecode.Join(f, "prompt"), "missing: the chat smoke needs a non-empty prompt, as SGLang asserts")
		}
		if len(c.Request.Images) != 1 {
			d.Addf(v.Line, strictdecode.Join(f, "images"), "want exactly one image (a URL or a file), as SGLang's chat smoke sends, got %d", len(c.Request.Images))
		}
	}
	if _, _, ok := o.get("lora"); ok {
		d.Addf(o.lineOf("lora"), strictdecode.Join(field, "lora"), "a text case has no images to compare: lora applies to image and video cases")
	}
	off := false
	for _, t := range []struct {
		key string
		v   **bool
	}{
		{"perf", &c.Checks.Perf}, {"perf_record", &c.Checks.PerfRecord}, {"memory", &c.Checks.Memory}, {"output", &c.Checks.Output},
		{"consistency", &c.Checks.Consistency}, {"ground_truth_required", &c.Checks.GroundTruthRequired}, {"audio", &c.Checks.Audio},
		{"repeat", &c.Checks.Repeat}, {"models_api", &c.Checks.ModelsAPI}, {"t2v_input_reference", &c.Checks.T2VInputReference},
	} {
		if *t.v != nil && **t.v {
			d.Addf(o.lineOf("checks"), strictdecode.Join(strictdecode.Join(field, "checks"), t.key),
				"a text case runs SGLang's chat smoke alone (no media, no perf record): %s cannot be on", t.key)
		}
		*t.v = &off
	}
}
