package checks

import (
	"fmt"
	"strings"

	"github.com/diffusion-check/diffusion-check/results"
)

// OutputChatCompletion is SGLang's chat-completion smoke of a text-generating model
// (test_server_common.py _test_chat_completion_smoke, read through the search index at a
// commit newer than pandalee99/sglang @ cce0a1244): the answer to POST /v1/chat/completions
// with one image and a prompt (max_completion_tokens 64, temperature 0) has an id, exactly one
// choice whose content is non-empty text and whose finish reason is stop or length, and token
// usage whose total is its prompt and completion counts, each positive.
const OutputChatCompletion = "output.chat_completion"

// ChatAnswer is what the runner read of a chat completion: the call that got it ("POST
// /v1/chat/completions"), its id, choices and usage (nil when the answer had none).
type ChatAnswer struct {
	Call    string
	ID      string
	Choices []ChatChoice
	Usage   *ChatUsage
}

// ChatChoice is one choice: its message's content and its finish reason, nil when absent or
// null.
type ChatChoice struct {
	Content, FinishReason *string
}

// ChatUsage is an answer's token usage.
type ChatUsage struct {
	PromptTokens, CompletionTokens, TotalTokens int
}

// ChatCompletion judges a chat completion with SGLang's assertions in their order, failing at
// the first with its words and the value.
func ChatCompletion(a ChatAnswer) results.Check {
	c := results.Check{Name: OutputChatCompletion, Status: results.Pass}
	if why := chatProblem(a); why != "" {
		c.Status, c.Detail, c.Cause = results.Fail, a.Call+": "+why, "chat completion broken"
		return c
	}
	u := a.Usage
	c.Detail = fmt.Sprintf("%s: finish reason %s; %d prompt + %d completion = %d tokens: %s", a.Call,
		*a.Choices[0].FinishReason, u.PromptTokens, u.CompletionTokens, u.TotalTokens, snippet([]byte(*a.Choices[0].Content)))
	return c
}

// chatProblem is the first of SGLang's assertions a breaks, "" for none.
func chatProblem(a ChatAnswer) string {
	if strings.TrimSpace(a.ID) == "" {
		return "chat completion must return a request id"
	}
	if len(a.Choices) != 1 {
		return fmt.Sprintf("expected exactly one chat completion choice, got %d", len(a.Choices))
	}
	ch := a.Choices[0]
	if ch.Content == nil || strings.TrimSpace(*ch.Content) == "" {
		got := "null"
		if ch.Content != nil {
			got = snippet([]byte(*ch.Content))
		}
		return "assistant content must be non-empty text, got " + got
	}
	if ch.FinishReason == nil || *ch.FinishReason != "stop" && *ch.FinishReason != "length" {
		got := "null"
		if ch.FinishReason != nil {
			got = fmt.Sprintf("%q", *ch.FinishReason)
		}
		return fmt.Sprintf("unsupported finish reason %s (want stop or length)", got)
	}
	u := a.Usage
	switch {
	case u == nil:
		return "token usage must be present"
	case u.PromptTokens <= 0:
		return fmt.Sprintf("prompt token count must be positive, got %d", u.PromptTokens)
	case u.CompletionTokens <= 0:
		return fmt.Sprintf("completion token count must be positive, got %d", u.CompletionTokens)
	case u.TotalTokens != u.PromptTokens+u.CompletionTokens:
		return fmt.Sprintf("total token count must equal prompt plus completion: %d ≠ %d + %d", u.TotalTokens, u.PromptTokens, u.CompletionTokens)
	}
	return ""
}
