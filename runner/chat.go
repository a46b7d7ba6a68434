package runner

import (
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"

	"github.com/diffusion-check/diffusion-check/checks"
	"github.com/diffusion-check/diffusion-check/suite"
)

// chatPath is the OpenAI chat endpoint a text case's requests go to.
const chatPath = "/v1/chat/completions"

// chatMaxTokens is the completion budget of SGLang's chat smoke (_test_chat_completion_smoke:
// max_completion_tokens=64, temperature=0).
const chatMaxTokens = 64

// chatResponse is the part of OpenAI's chat completion object the smoke reads.
type chatResponse struct {
	ID      string `json:"id"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

// chat sends a text case's request as SGLang's chat smoke does: one user message of the image
// (its URL, or a file of the checkout as a data: URL) and the prompt, 64 completion tokens at
// temperature 0, the case's extra fields merged. The assistant's text is saved as
// completion.txt beside the request's other files.
func (c *client) chat(ctx context.Context, cs *suite.Case) (reply, error) {
	r := cs.Request
	url := r.Images[0]
	if !suite.IsURL(url) {
		data, _, err := c.inputs.read(ctx, url)
		if err != nil {
			return reply{}, err
		}
		url = "data:" + http.DetectContentType(data) + ";base64," + base64.StdEncoding.EncodeToString(data)
	}
	body := map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}},
			map[string]any{"type": "text", "text": r.Prompt},
		}}},
		"max_completion_tokens": chatMaxTokens,
		"temperature":           0,
	}
	if c.model != "" {
		body["model"] = c.model
	}
	merge(body, r.Extra)
	var resp chatResponse
	if err := c.postJSON(ctx, chatPath, body, &resp); err != nil {
		return reply{}, err
	}
	a := &checks.ChatAnswer{Call: http.MethodPost + " " + chatPath, ID: resp.ID}
	for _, ch := range resp.Choices {
		a.Choices = append(a.Choices, checks.ChatChoice{Content: ch.Message.Content, FinishReason: ch.FinishReason})
	}
	if u := resp.Usage; u != nil {
		a.Usage = &checks.ChatUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	}
	out := reply{ID: resp.ID, Chat: a}
	if len(a.Choices) > 0 && a.Choices[0].Content != nil {
		if err := os.WriteFile(filepath.Join(c.dir, "completion.txt"), []byte(*a.Choices[0].Content), 0o644); err != nil {
			return out, &saveError{err}
		}
	}
	return out, nil
}
