package probe

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestConformAgentPresets holds synthetic profiles against each agent
// preset: a fault a preset re-sends in a loop of its own (Claude Code's
// 400, 404 and in-stream errors, Gemini CLI's error frames) is one it
// retries; x-should-retry is obeyed only where the preset obeys it (not on
// Claude Code's 503); a Retry-After is read as the preset reads it
// (Claude Code: no HTTP-date, no retry-after-ms, nothing above 60s).
func TestConformAgentPresets(t *testing.T) {
	type line struct{ want, state string }
	tests := []struct {
		name    string
		prov    string
		preset  string
		retried map[string]bool // the synthetic profile's decisions
		want    map[string]line // rule → expected, state
	}{
		{name: "claude-code re-sends at once", prov: "anthropic", preset: "claude-code",
			retried: map[string]bool{"400": true, "404": true, "sse overloaded_error": true, "400 x-should-retry true": true,
				"503 x-should-retry false": true, "429 retry-after 3600": false, "429 retry-after http-date": true, "drop": true},
			want: map[string]line{
				"retries 400":                       {"yes (5 re-sends at once)", Holds},
				"retries 404":                       {"yes (1 re-send at once)", Holds},
				"retries sse overloaded_error":      {"yes (1 re-send at once)", Holds},
				"retries 400 x-should-retry true":   {"yes (5 re-sends at once)", Holds},
				"retries 503 x-should-retry false":  {"yes", Holds},
				"retries 429 retry-after 3600":      {"no", Holds},
				"retries 429 retry-after http-date": {"yes", Holds},
				"retries drop":                      {"yes (10 re-sends, the first after 500ms)", Holds},
			}},
		{name: "claude-code: a client that does not re-send differs", prov: "anthropic", preset: "claude-code",
			retried: map[string]bool{"400": false, "404": false},
			want: map[string]line{
				"retries 400": {"yes (5 re-sends at once)", Differs},
				"retries 404": {"yes (1 re-send at once)", Differs},
			}},
		{name: "the SDK neither re-sends nor ignores x-should-retry", prov: "anthropic", preset: "anthropic-node",
			retried: map[string]bool{"400": true, "503 x-should-retry false": true, "400 x-should-retry true": true},
			want: map[string]line{
				"retries 400":                      {"no", Differs},
				"retries 503 x-should-retry false": {"no", Differs},
				"retries 400 x-should-retry true":  {"yes", Holds},
			}},
		{name: "codex-cli reconnects on 403", prov: "openai-responses", preset: "codex-cli",
			retried: map[string]bool{"403": true, "429": false, "429 retry-after 3": true},
			want: map[string]line{
				"retries 403":               {"yes", Holds},
				"retries 429":               {"no", Holds},
				"retries 429 retry-after 3": {"yes", Holds},
			}},
		{name: "gemini-cli re-sends an error frame after 1s", prov: "gemini", preset: "gemini-cli",
			retried: map[string]bool{"sse UNAVAILABLE": true, "drop": false, "400": false},
			want: map[string]line{
				"retries sse UNAVAILABLE": {"yes (3 re-sends, the first after 1s)", Holds},
				"retries drop":            {"no", Holds},
				"retries 400":             {"no", Holds},
			}},
		{name: "langchain-js reads retry-after only, under 60s", prov: "anthropic", preset: "langchain-js",
			retried: map[string]bool{"429 retry-after 3": true, "429 retry-after-ms 1700": false, "429 retry-after 3600": false, "429": false},
			want: map[string]line{
				"retries 429 retry-after 3":       {"yes", Holds},
				"retries 429 retry-after-ms 1700": {"no", Holds},
				"retries 429 retry-after 3600":    {"no", Holds},
				"retries 429":                     {"no", Holds},
			}},
		{name: "vercel-ai-sdk falls back to its backoff above 60s", prov: "anthropic", preset: "vercel-ai-sdk",
			retried: map[string]bool{"429 retry-after 3600": true, "409": true, "sse overloaded_error": false},
			want: map[string]line{
				"retries 429 retry-after 3600": {"yes", Holds},
				"retries 409":                  {"yes", Holds},
				"retries sse overloaded_error": {"no", Holds},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prov, err := LookupProvider(tt.prov)
			if err != nil {
				t.Fatal(err)
			}
			p := &Profile{}
			for f, r := range tt.retried {
				if _, ok := prov.Fault(f); !ok {
					t.Fatalf("no fault %q on %s", f, tt.prov)
				}
				p.Faults = append(p.Faults, FaultResult{Fault: f, Retried: boolp(r)})
			}
			got := map[string]line{}
			for _, c := range Conform(p, prov) {
				if _, ok := tt.want[c.Rule]; ok && c.Preset == tt.preset {
					got[c.Rule] = line{c.Want, c.State}
				}
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(line{})); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.preset, diff)
			}
		})
	}
}
