package verify

import (
	"slices"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
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
		sc   *scenario.Scenario
		want bool
	}{
		{"external client", &scenario.Scenario{Client: scenario.Client{Command: []string{"qwen"}}}, true},
		{"with attemptsMatch", &scenario.Scenario{Client: scenario.Client{Command: []string{"qwen"}}, AttemptsMatch: &scenario.AttemptsMatch{Prompt: "Say hi"}}, false},
		{"built-in client", &scenario.Scenario{}, false},
	} {
		tc.sc.Expect.Attempts, tc.sc.Expect.Outcome = &three, "success"
		var hinted []string
		for _, c := range Evaluate(tc.sc, ob, nil) {
			if strings.Contains(c.Hint, "attemptsMatch") {
				hinted = append(hinted, c.Name)
			}
		}
		if got := len(hinted) == 1 && hinted[0] == "attempts"; got != tc.want {
			t.Errorf("%s: checks hinted %v, want the attempts check: %v", tc.name, hinted, tc.want)
		}
	}
}

func TestUnserved(t *testing.T) {
	got := Unserved([]mock.SideRequest{
		{Method: "POST", Path: "/chat/completions", Status: 404},
		{Method: "GET", Path: "/v1/models", Status: 200},
		{Method: "POST", Path: "/chat/completions", Status: 404},
		{Method: "GET", Path: "/v1/chat/completions", Status: 405},
		{Method: "HEAD", Path: "/", Status: 200},
	})
	if want := []string{"POST /chat/completions", "GET /v1/chat/completions"}; !slices.Equal(got, want) {
		t.Errorf("unserved() = %q, want %q", got, want)
	}
}

// TestHintUnserved: a client whose requests went to paths the mock does
// not serve (a base URL without /v1) fails its outcome and attempts checks
// with a hint naming them; a passing check gets none.
func TestHintUnserved(t *testing.T) {
	three := 3
	sc := &scenario.Scenario{Client: scenario.Client{Command: []string{"agent"}}}
	sc.Expect.Attempts, sc.Expect.Outcome = &three, "success"
	for _, tc := range []struct {
		name     string
		ob       Observed
		wantHint []string
	}{
		{"wrong base URL", Observed{Outcome: "failure", Unserved: []string{"POST /chat/completions"}}, []string{"outcome", "attempts"}},
		{"served", Observed{Outcome: "failure"}, nil},
		{"passing checks", Observed{Outcome: "success", ServerAttempts: 3, Unserved: []string{"GET /v1/nothing"}}, nil},
	} {
		var hinted []string
		for _, c := range Evaluate(sc, tc.ob, nil) {
			if strings.Contains(c.Hint, "base URL") {
				if !strings.Contains(c.Hint, "POST /chat/completions") && tc.name == "wrong base URL" {
					t.Errorf("%s: hint %q does not name the request", tc.name, c.Hint)
				}
				hinted = append(hinted, c.Name)
			}
		}
		if !slices.Equal(hinted, tc.wantHint) {
			t.Errorf("%s: checks hinted %v, want %v", tc.name, hinted, tc.wantHint)
		}
	}
}
