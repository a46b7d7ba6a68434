package refserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestChatCompletions: the chat endpoint answers SGLang's smoke request in OpenAI's shape,
// the same text for the same request, usage that adds up (an image is 64 prompt tokens), the
// content cut at max_completion_tokens with finish reason length; a message it cannot read is
// a 400; the chat faults break what they name.
func TestChatCompletions(t *testing.T) {
	req := func(prompt string, limit int) map[string]any {
		return map[string]any{"model": "m", "max_completion_tokens": limit, "temperature": 0, "messages": []any{map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://x.org/a.png"}},
				map[string]any{"type": "text", "text": prompt}}}}}
	}
	type answer struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Choices []struct {
			Message      struct{ Role, Content string } `json:"message"`
			FinishReason string                         `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
			Total      int `json:"total_tokens"`
		} `json:"usage"`
	}
	ask := func(t *testing.T, ts *testServer, body map[string]any) answer {
		t.Helper()
		st, b := ts.postJSON(t, "/v1/chat/completions", body)
		if st != http.StatusOK {
			t.Fatalf("status %d: %s", st, b)
		}
		var a answer
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		return a
	}
	ts := start(t, Config{})
	a := ask(t, ts, req("Describe this image in one sentence.", 64))
	if !strings.HasPrefix(a.ID, "chatcmpl-") || a.Object != "chat.completion" || len(a.Choices) != 1 || a.Choices[0].Message.Role != "assistant" {
		t.Fatalf("not OpenAI's shape: %+v", a)
	}
	c := a.Choices[0]
	if c.FinishReason != "stop" || a.Usage.Prompt != 6+imageTokens || a.Usage.Completion != len(strings.Fields(c.Message.Content)) ||
		a.Usage.Total != a.Usage.Prompt+a.Usage.Completion {
		t.Errorf("answer %+v", a)
	}
	if again := ask(t, ts, req("Describe this image in one sentence.", 64)); again.Choices[0].Message.Content != c.Message.Content {
		t.Errorf("the same request got another text: %q, then %q", c.Message.Content, again.Choices[0].Message.Content)
	}
	if cut := ask(t, ts, req("Describe it.", 3)); cut.Choices[0].FinishReason != "length" || cut.Usage.Completion != 3 {
		t.Errorf("at a budget of 3: %+v", cut)
	}
	bad := map[string]any{"messages": []any{map[string]any{"role": "user", "content": 3}}}
	if st, b := ts.postJSON(t, "/v1/chat/completions", bad); st != http.StatusBadRequest {
		t.Errorf("unreadable content: %d %s, want 400", st, b)
	}
	if e := ask(t, start(t, Config{Faults: faults(t, "chat-empty")}), req("Describe it.", 64)); e.Choices[0].Message.Content != "" {
		t.Errorf("chat-empty: content %q", e.Choices[0].Message.Content)
	}
	if u := ask(t, start(t, Config{Faults: faults(t, "chat-usage-off")}), req("Describe it.", 64)).Usage; u.Total != u.Prompt+u.Completion+1 {
		t.Errorf("chat-usage-off: usage %+v", u)
	}
}
