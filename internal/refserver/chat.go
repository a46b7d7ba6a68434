package refserver

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The reference server's POST /v1/chat/completions: the OpenAI chat completion a
// text-generating diffusion model answers, as SGLang's chat smoke reads it
// (test_server_common.py _test_chat_completion_smoke: id, one choice, its content and finish
// reason, token usage). SGLang's own endpoint could not be read; the answer has OpenAI's
// shape. The reply describes the request deterministically: the same messages get the same
// text. It counts words as tokens, the image as imageTokens of the prompt, and stops at
// max_completion_tokens with finish reason "length". Faults: chat-empty answers an empty
// content, chat-usage-off a total one token more than its parts.

// imageTokens is what one image adds to the prompt's token count.
const imageTokens = 64

// chatMaxBody bounds a chat request's body (an image as a data: URL included).
const chatMaxBody = 64 << 20

// chatRequest is the part of a chat request the reference server reads: the messages (each
// content a string or a list of text and image_url parts) and the completion budget.
type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	MaxCompletionTokens *int          `json:"max_completion_tokens"`
	MaxTokens           *int          `json:"max_tokens"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type chatPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

// chat serves POST /v1/chat/completions.
func (h *Handler) chat(w http.ResponseWriter, r *http.Request) {
	number := h.next()
	b, err := io.ReadAll(io.LimitReader(r.Body, chatMaxBody+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "read the request: "+err.Error())
		return
	}
	var req chatRequest
	if len(b) > chatMaxBody {
		writeError(w, http.StatusRequestEntityTooLarge, "request body too large")
		return
	}
	if err := json.Unmarshal(b, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	words, images, err := chatInput(req.Messages)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	limit := 16 // OpenAI's default is the model's; the smoke always sets one
	for _, v := range []*int{req.MaxCompletionTokens, req.MaxTokens} {
		if v != nil {
			if *v < 1 {
				writeError(w, http.StatusBadRequest, "max_completion_tokens must be at least 1")
				return
			}
			limit = *v
			break
		}
	}
	id := "chatcmpl-" + strings.ReplaceAll(newID(), "-", "")
	content, finish := chatReply(b, words, limit)
	prompt, completion := len(words)+images*imageTokens, len(strings.Fields(content))
	if h.cfg.Faults.ChatEmpty {
		content, completion = "", 0
	}
	total := prompt + completion
	if h.cfg.Faults.ChatUsageOff {
		total++
	}
	h.logf("INFO", "[%s #%d] chat: %d prompt tokens (%d images), %d completion tokens, finish %s", id, number, prompt, images, completion, finish)
	model := req.Model
	if model == "" {
		model = h.served()
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []map[string]any{{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total},
	})
}

// chatInput reads the words of the messages' text and counts their images; a request without
// a user message, or with a part it cannot read, is refused.
func chatInput(msgs []chatMessage) (words []string, images int, err error) {
	if len(msgs) == 0 {
		return nil, 0, fmt.Errorf("messages: at least one message is required")
	}
	for i, m := range msgs {
		var text string
		if err := json.Unmarshal(m.Content, &text); err == nil {
			words = append(words, strings.Fields(text)...)
			continue
		}
		var parts []chatPart
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			return nil, 0, fmt.Errorf("messages[%d].content: want a string or a list of parts", i)
		}
		for k, p := range parts {
			switch {
			case p.Type == "text":
				words = append(words, strings.Fields(p.Text)...)
			case p.Type == "image_url" && p.ImageURL != nil && p.ImageURL.URL != "":
				images++
			default:
				return nil, 0, fmt.Errorf("messages[%d].content[%d]: want a text or an image_url part with a url", i, k)
			}
		}
	}
	return words, images, nil
}

// chatVocabulary are the words of the reference model's descriptions.
var chatVocabulary = strings.Fields("a soft gradient of warm and cool colour fills the frame while five round shapes drift " +
	"over it, two broad waves cross the middle, a fine texture covers the background, the light comes from the left " +
	"and the scene looks calm")

// chatReply is the reference model's answer to a request body: a description that depends on
// the whole body, at most limit words, and its finish reason.
func chatReply(body []byte, prompt []string, limit int) (content, finish string) {
	sum := sha256.Sum256(body)
	n := 12 + int(sum[0])%12 // 12 to 23 words
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, chatVocabulary[(int(sum[1+i%31])+i)%len(chatVocabulary)])
	}
	if len(prompt) > 0 {
		if w := strings.ToLower(strings.Trim(prompt[0], ".,:;?!")); w != "" {
			out[0] = w // one word of the prompt: another prompt, another text
		}
	}
	finish = "stop"
	if len(out) > limit {
		out, finish = out[:limit], "length"
	}
	return strings.Join(out, " ") + ".", finish
}
