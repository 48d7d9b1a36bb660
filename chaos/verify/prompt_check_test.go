package verify

import (
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos/scenario"
)

// TestPromptCheck: expect.prompts passes when every string is (or is not)
// in that attempt's prompt, and says what is missing or what never came.
func TestPromptCheck(t *testing.T) {
	t.Parallel()
	ob := Observed{Prompts: []string{"Say hello.", "Previous attempt failed ... Original request:\nSay hello."}}
	for _, tc := range []struct {
		name    string
		pe      scenario.PromptExpect
		pass    bool
		gotPart string
	}{
		{"contains", scenario.PromptExpect{Attempt: 2, Contains: []string{"Previous attempt failed", "Original request:"}}, true, ""},
		{"missing", scenario.PromptExpect{Attempt: 1, Contains: []string{"Previous attempt failed"}}, false, `lacks "Previous attempt failed"`},
		{"not contains", scenario.PromptExpect{Attempt: 1, NotContains: []string{"Previous"}}, true, ""},
		{"holds", scenario.PromptExpect{Attempt: 2, NotContains: []string{"Previous"}}, false, `holds "Previous"`},
		{"no such attempt", scenario.PromptExpect{Attempt: 3, Contains: []string{"x"}}, false, "no attempt 3 (the server saw 2)"},
	} {
		c := promptCheck(tc.pe, ob)
		if c.Passed != tc.pass || !strings.Contains(c.Got, tc.gotPart) || c.Name != "prompts[attempt "+string(rune('0'+tc.pe.Attempt))+"]" {
			t.Errorf("%s: %+v", tc.name, c)
		}
	}
}
