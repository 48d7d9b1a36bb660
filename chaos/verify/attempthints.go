package verify

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// Hints for a failed check whose cause is which requests the mock counted
// as attempts: an agent's own calls counted (hintMixedAttempts), or the
// client's requests not counted at all because they went to a path the
// mock does not serve (hintUnserved).
//
// Agents call the model beside the user's turn on the same endpoint: a
// session title (opencode), a memory extraction after the answer (Qwen
// Code), a routing call (Gemini CLI). Without attemptsMatch each is an
// attempt and meets a fault, so an honest agent fails the attempts or
// delays check for a reason the check alone does not show. When the
// attempts of such a failure carry different prompts, the hint says so.

// hintMixedAttempts adds a hint to the failed attempts and delays checks
// in cs of an external client's scenario without attemptsMatch whose
// attempts carry different prompts (ob.Prompts), unless the check has a
// hint already.
func hintMixedAttempts(cs []Check, sc *scenario.Scenario, ob Observed) {
	if sc.AttemptsMatch != nil || len(sc.Client.Command) == 0 {
		return
	}
	hint := mixedPromptsHint(ob.Prompts)
	if hint == "" {
		return
	}
	for i, c := range cs {
		switch c.Name {
		case "attempts", "delays.server", "delays.client":
			if !c.Passed && c.Hint == "" {
				cs[i].Hint = hint
			}
		}
	}
}

// mixedPromptsHint says which two attempts first carry different prompts
// and what tells them apart; "" when every prompt read is the same.
func mixedPromptsHint(prompts []string) string {
	first := -1
	for i, p := range prompts {
		switch {
		case p == "":
		case first < 0:
			first = i
		case p != prompts[first]:
			return fmt.Sprintf("attempts %d and %d carry different prompts (%q, %q): an agent's own call beside its turn (a title, a memory extraction, a routing call) may be counted as an attempt; say which requests are attempts with attemptsMatch: {prompt: ...}, {model: ...} or {tools: true} (docs/chaos.md, Side requests)",
				first+1, i+1, clip(prompts[first], 40), clip(p, 40))
		}
	}
	return ""
}

// clip keeps the first n runes of s, marking a cut with "…".
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// Unserved lists the side requests answered 404 or 405, each "METHOD
// path" once, in the order they came.
func Unserved(sides []mock.SideRequest) []string {
	var out []string
	for _, s := range sides {
		if s.Status != http.StatusNotFound && s.Status != http.StatusMethodNotAllowed {
			continue
		}
		if r := mock.Printable(s.Method) + " " + mock.Printable(s.Path); !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// hintUnserved adds a hint to a failed outcome or attempts check (without
// one) when the client sent requests the mock serves no answer for: most
// often a base URL with a /v1 too few or too many.
func hintUnserved(cs []Check, ob Observed) {
	if len(ob.Unserved) == 0 {
		return
	}
	shown := ob.Unserved
	if len(shown) > 3 {
		shown = append(shown[:3:3], fmt.Sprintf("… (%d in all)", len(ob.Unserved)))
	}
	hint := fmt.Sprintf("the mock answered the client's %s with 404/405: it serves %s; is the client's base URL right? (%s; mock.log)",
		strings.Join(shown, ", "), wire.Routes(), wire.BaseURLHint())
	for i, c := range cs {
		if (c.Name == "outcome" || c.Name == "attempts") && !c.Passed && c.Hint == "" {
			cs[i].Hint = hint
		}
	}
}
