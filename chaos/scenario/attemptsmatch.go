package scenario

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/retrylab/retrylab/internal/wire"
)

// AttemptsMatch is the scenario key attemptsMatch: which answer requests
// are the scenario's attempts. Every field given must match; a request a
// wire format answers that does not match is a side request, answered
// with a success in its format.
type AttemptsMatch struct {
	Path   string `yaml:"path"`   // the request path, a path.Match pattern: /v1/responses, /v1beta/models/*
	Model  string `yaml:"model"`  // the request's model, a path.Match pattern: gpt-5*, claude-sonnet-4-5
	Stream *bool  `yaml:"stream"` // whether the request asked for a stream
	// Prompt is text the request's prompt (its last user message) must
	// contain: an agent's own calls beside the answer (a title, a memory
	// extraction, a summary), sent to the same path and model, carry
	// prompts of their own.
	Prompt string `yaml:"prompt"`
	// Tools is whether the request offers the model tools (a non-empty
	// top-level tools array, where all four wire formats put them): an
	// agent's turn does, its title call to the same model often does not
	// (opencode over an OpenAI-compatible provider).
	Tools *bool `yaml:"tools"`
}

// Matches reports whether an answer request is an attempt; a nil
// AttemptsMatch matches every one.
func (m *AttemptsMatch) Matches(reqPath string, rb wire.Request) bool {
	if m == nil {
		return true
	}
	if m.Prompt != "" && !strings.Contains(rb.Prompt, m.Prompt) {
		return false
	}
	if ok, _ := path.Match(m.Path, reqPath); m.Path != "" && !ok {
		return false
	}
	if ok, _ := path.Match(m.Model, rb.Model); m.Model != "" && !ok {
		return false
	}
	return (m.Stream == nil || *m.Stream == rb.Stream) && (m.Tools == nil || *m.Tools == rb.Tools)
}

// String says what attemptsMatch matches, for logs and errors.
func (m *AttemptsMatch) String() string {
	var parts []string
	if m.Path != "" {
		parts = append(parts, "path "+m.Path)
	}
	if m.Model != "" {
		parts = append(parts, "model "+m.Model)
	}
	if m.Stream != nil {
		parts = append(parts, fmt.Sprintf("stream %v", *m.Stream))
	}
	if m.Prompt != "" {
		parts = append(parts, fmt.Sprintf("prompt containing %q", m.Prompt))
	}
	if m.Tools != nil {
		parts = append(parts, fmt.Sprintf("tools %v", *m.Tools))
	}
	return strings.Join(parts, ", ")
}

// Excerpt keeps s whole when it fits in max bytes, else its first and last
// max/2 bytes, cut at rune boundaries, joined by " … ".
func Excerpt(s string, max int) string {
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
