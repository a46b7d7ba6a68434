package checks

import (
	"strings"
	"testing"

	"github.com/diffusion-check/diffusion-check/results"
)

// TestChatCompletionRules: SGLang's assertions of the chat smoke in their order, each failing
// with its words and the value: an id, one choice, non-empty content, finish reason stop or
// length, usage present, positive prompt and completion counts, a total that adds up.
func TestChatCompletionRules(t *testing.T) {
	s := func(v string) *string { return &v }
	good := func() ChatAnswer {
		return ChatAnswer{Call: "POST /v1/chat/completions", ID: "chatcmpl-1", Choices: []ChatChoice{{Content: s("A cat."), FinishReason: s("stop")}},
			Usage: &ChatUsage{PromptTokens: 70, CompletionTokens: 2, TotalTokens: 72}}
	}
	for _, tc := range []struct {
		name string
		edit func(a *ChatAnswer)
		want string
	}{
		{"an answer", func(*ChatAnswer) {}, ""},
		{"cut at the budget", func(a *ChatAnswer) { a.Choices[0].FinishReason = s("length") }, ""},
		{"no id", func(a *ChatAnswer) { a.ID = " " }, "chat completion must return a request id"},
		{"two choices", func(a *ChatAnswer) { a.Choices = append(a.Choices, a.Choices[0]) }, "expected exactly one chat completion choice, got 2"},
		{"no choice", func(a *ChatAnswer) { a.Choices = nil }, "expected exactly one chat completion choice, got 0"},
		{"null content", func(a *ChatAnswer) { a.Choices[0].Content = nil }, "assistant content must be non-empty text, got null"},
		{"blank content", func(a *ChatAnswer) { a.Choices[0].Content = s("  ") }, `assistant content must be non-empty text, got "  "`},
		{"another finish", func(a *ChatAnswer) { a.Choices[0].FinishReason = s("tool_calls") }, `unsupported finish reason "tool_calls"`},
		{"no finish", func(a *ChatAnswer) { a.Choices[0].FinishReason = nil }, "unsupported finish reason null"},
		{"no usage", func(a *ChatAnswer) { a.Usage = nil }, "token usage must be present"},
		{"no prompt tokens", func(a *ChatAnswer) { a.Usage.PromptTokens, a.Usage.TotalTokens = 0, 2 }, "prompt token count must be positive, got 0"},
		{"no completion tokens", func(a *ChatAnswer) { a.Usage.CompletionTokens, a.Usage.TotalTokens = 0, 70 }, "completion token count must be positive, got 0"},
		{"a total off", func(a *ChatAnswer) { a.Usage.TotalTokens = 73 }, "total token count must equal prompt plus completion: 73 ≠ 70 + 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := good()
			tc.edit(&a)
			c := ChatCompletion(a)
			switch {
			case tc.want == "" && c.Status != results.Pass:
				t.Errorf("got %+v, want a pass", c)
			case tc.want != "" && (c.Status != results.Fail || !strings.HasPrefix(c.Detail, "POST /v1/chat/completions: "+tc.want)):
				t.Errorf("got %+v, want a failure saying %q", c, tc.want)
			}
		})
	}
}
