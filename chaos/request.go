package chaos

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// requestBody is what the mock reads of a JSON request body, decoded once
// per request: the fields that shape the answer, and the messages, kept raw
// until a prompt is asked for (a messages value of any shape never spoils
// the other fields).
type requestBody struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages json.RawMessage `json:"messages"`
}

// decodeRequest decodes a request body; a body that is not a JSON object
// gives the zero requestBody: fields that parsed before an error are kept
// by Unmarshal, and a half-parsed body is not trusted.
func decodeRequest(body []byte) requestBody {
	var v requestBody
	if json.Unmarshal(body, &v) != nil {
		return requestBody{}
	}
	if len(v.Model) > 200 {
		v.Model = v.Model[:200]
	}
	return v
}

// requestFields returns the "model", "stream" and
// "stream_options.include_usage" fields of a JSON request body; a body that
// is not a JSON object gives "" and false.
func requestFields(body []byte) (model string, stream, includeUsage bool) {
	v := decodeRequest(body)
	return v.Model, v.Stream, v.StreamOptions.IncludeUsage
}

// requestPrompt is decodeRequest(body).prompt().
func requestPrompt(body []byte) string { return decodeRequest(body).prompt() }

// prompt returns the text of the last user message of an Anthropic
// Messages or OpenAI Chat Completions request: its content string, or its
// text parts joined by newlines; "" when there is none. The result is valid
// UTF-8 and at most maxPromptExcerpt bytes plus the " … " joint.
func (v requestBody) prompt() string {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if len(v.Messages) == 0 || json.Unmarshal(v.Messages, &msgs) != nil {
		return ""
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != "user" {
			continue
		}
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if json.Unmarshal(m.Content, &parts) != nil {
				return ""
			}
			var texts []string
			for _, p := range parts {
				if p.Type == "text" {
					texts = append(texts, p.Text)
				}
			}
			text = strings.Join(texts, "\n")
		}
		return excerpt(strings.ToValidUTF8(text, "\uFFFD"), maxPromptExcerpt)
	}
	return ""
}

// excerpt keeps s whole when it fits in max bytes, else its first and last
// max/2 bytes, cut at rune boundaries, joined by " … ".
func excerpt(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head, tail := s[:max/2], s[len(s)-max/2:]
	for len(head) > 0 && !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	for len(tail) > 0 && !utf8.ValidString(tail) {
		tail = tail[1:]
	}
	return head + " … " + tail
}

// maxPromptExcerpt bounds ServerAttempt.Prompt, in bytes: a longer prompt
// keeps its first and last maxPromptExcerpt/2 bytes (cut at rune
// boundaries) around " … ", so both an error context at its start and the
// original request at its end stay visible.
const maxPromptExcerpt = 2048
