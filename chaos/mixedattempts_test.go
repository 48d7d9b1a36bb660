package chaos

import (
	"strings"
	"testing"
)

func TestMixedPromptsHint(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prompts []string
		want    string // "" or a part of the hint
	}{
		{"none", nil, ""},
		{"one prompt", []string{"Say hi", "Say hi", "Say hi"}, ""},
		{"unread prompts", []string{"", "Say hi", ""}, ""},
		{"memory extraction after the answer", []string{"Say hi", "Say hi", "Say hi", "Managed memory directory: `/tmp/x`"}, `attempts 1 and 4 carry different prompts ("Say hi", "Managed memory directory: ` + "`/tmp/x`" + `")`},
		{"title call first", []string{"Generate a title for this conversation:\n\n\"Say hi\"", `"Say hi"`}, "attempts 1 and 2"},
		{"long prompt clipped", []string{"a", strings.Repeat("b", 100)}, strings.Repeat("b", 40) + "…"},
	} {
		got := mixedPromptsHint(tc.prompts)
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: mixedPromptsHint() = %q, want one containing %q", tc.name, got, tc.want)
		}
	}
}

// TestHintMixedAttempts: the hint goes on a failed attempts or delays
// check of an external client without attemptsMatch, and nowhere else.
func TestHintMixedAttempts(t *testing.T) {
	three := 3
	ob := Observed{ServerAttempts: 4, Prompts: []string{"Say hi", "Say hi", "Say hi", "Managed memory"}, Outcome: "success"}
	for _, tc := range []struct {
		name string
		sc   *Scenario
		want bool
	}{
		{"external client", &Scenario{Client: Client{Command: []string{"qwen"}}}, true},
		{"with attemptsMatch", &Scenario{Client: Client{Command: []string{"qwen"}}, AttemptsMatch: &AttemptsMatch{Prompt: "Say hi"}}, false},
		{"built-in client", &Scenario{}, false},
	} {
		tc.sc.Expect.Attempts, tc.sc.Expect.Outcome = &three, "success"
		var hinted []string
		for _, c := range evaluate(tc.sc, ob, nil) {
			if strings.Contains(c.Hint, "attemptsMatch") {
				hinted = append(hinted, c.Name)
			}
		}
		if got := len(hinted) == 1 && hinted[0] == "attempts"; got != tc.want {
			t.Errorf("%s: checks hinted %v, want the attempts check: %v", tc.name, hinted, tc.want)
		}
	}
}
