package otlp

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/mappings")

// testClassify stands in for retry.Classify: this package does not classify.
func testClassify(_ string, a Attempt) string {
	if a.Unreported() {
		return "unknown"
	}
	if a.Status != 0 {
		return fmt.Sprintf("http_%d", a.Status)
	}
	return "network"
}

// readPayload reads an OTLP/JSON file of testdata/mappings.
func readPayload(t *testing.T, name string) Payload {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "mappings", name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseJSON(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p
}

// TestMappings reads exports of each vocabulary (hand-written from the
// published docs and source, or real captures: codex-real-*) and compares
// the account and the trace v1 events made of it with golden files.
func TestMappings(t *testing.T) {
	tests := []struct {
		name    string
		files   []string
		mapping string // the mapping that must read it; "" none
	}{
		{"semconv", []string{"semconv-traces.json"}, "semconv"},
		// The hostile tester's (repro 10-otlp-silent): gen_ai chat spans
		// alone, as OpenLLMetry writes them (one attempt each, uncounted);
		// the older http.method / http.url / http.status_code attributes,
		// three root spans in traces of their own, resend_count 0, 1, 2.
		{"semconv-genai-only", []string{"semconv-genai-only-traces.json"}, "semconv"},
		{"semconv-oldconv", []string{"semconv-oldconv-traces.json"}, "semconv"},
		{"claudecode-spans", []string{"claudecode-traces.json", "claudecode-logs.json"}, "claude-code"},
		{"claudecode-logs", []string{"claudecode-logs.json"}, "claude-code"},
		// Real exports of Claude Code 2.1.332 against the mock (run folder
		// otlp/ files, as received): 529, 500, 429, ok; 529 until
		// CLAUDE_CODE_MAX_RETRIES=2 ran out; a 400 re-sent without
		// streaming; a stream cut after 900 bytes, then 503, then ok.
		{"claudecode-real-success", []string{"claudecode-real-success-traces.json", "claudecode-real-success-logs.json"}, "claude-code"},
		{"claudecode-real-exhausted", []string{"claudecode-real-exhausted-traces.json", "claudecode-real-exhausted-logs.json"}, "claude-code"},
		{"claudecode-real-400", []string{"claudecode-real-400-traces.json", "claudecode-real-400-logs.json"}, "claude-code"},
		{"claudecode-real-cut", []string{"claudecode-real-cut-traces.json", "claudecode-real-cut-logs.json"}, "claude-code"},
		// Its logs alone: a failed call's api_error counts its attempts, a
		// successful call's api_request does not.
		{"claudecode-real-exhausted-logs", []string{"claudecode-real-exhausted-logs.json"}, "claude-code"},
		{"claudecode-real-success-logs", []string{"claudecode-real-success-logs.json"}, "claude-code"},
		// Real exports of the AI SDK (ai 7.0.173, @ai-sdk/otel 1.0.173,
		// testdata/agents/node/ai-sdk.mjs) against the mock, as received.
		// Its OpenTelemetry integration: 529, 503, ok (the chat span of
		// the last attempt only: uncounted); 529 until maxRetries 2 ran
		// out ("Failed after 3 attempts"); a 400; the Responses API, 503,
		// 500, ok.
		{"aisdk-real-success", []string{"aisdk-real-success-traces.json"}, "ai-sdk"},
		{"aisdk-real-exhausted", []string{"aisdk-real-exhausted-traces.json"}, "ai-sdk"},
		{"aisdk-real-400", []string{"aisdk-real-400-traces.json"}, "ai-sdk"},
		{"aisdk-real-responses", []string{"aisdk-real-responses-traces.json"}, "ai-sdk"},
		// LegacyOpenTelemetry's ai.streamText.doStream span, one per call.
		{"aisdk-real-legacy-success", []string{"aisdk-real-legacy-success-traces.json"}, "ai-sdk"},
		{"aisdk-real-legacy-exhausted", []string{"aisdk-real-legacy-exhausted-traces.json"}, "ai-sdk"},
		{"aisdk-real-legacy-400", []string{"aisdk-real-legacy-400-traces.json"}, "ai-sdk"},
		// With Node's fetch traced (instrumentation-undici): an HTTP span
		// per attempt, the retried ones under chat spans never exported.
		{"aisdk-real-http-success", []string{"aisdk-real-http-success-traces-1.json", "aisdk-real-http-success-traces-2.json"}, "ai-sdk"},
		{"aisdk-real-http-exhausted", []string{"aisdk-real-http-exhausted-traces-1.json", "aisdk-real-http-exhausted-traces-2.json"}, "ai-sdk"},
		// Hand-written: every attempt's span ended (durable mode), a
		// RetryError's count past what is filled in, an abort, a stream
		// cut after its 200, two calls sharing an orphan HTTP span, a
		// legacy generateText non-retryable on its second attempt, and
		// hostile attribute types.
		{"aisdk-edges", []string{"aisdk-edges-traces.json"}, "ai-sdk"},
		// Codex CLI 0.171.0's real exports (docs/agents.md), from retrylab
		// run folders: its logs of 503, 503, ok; of 503 x 6, ok (five HTTP
		// tries, then a stream reconnect whose attempt count starts again);
		// of a stream cut twice, a reset, ok; of response.failed
		// (rate_limit_exceeded, then server_error), ok; and its spans alone
		// of the cut, cut, reset, ok. Trimmed: the codex.sse_event records
		// of the stream's other events are left out, and so are the spans
		// that carry none of codex.api_request or codex.retry; host.name and
		// the working folder are replaced.
		{"codex-real-503-503-ok", []string{"codex-real-503-503-ok-logs.json"}, "codex"},
		{"codex-real-reconnect", []string{"codex-real-reconnect-logs.json"}, "codex"},
		{"codex-real-stream-errors", []string{"codex-real-stream-errors-logs.json"}, "codex"},
		{"codex-real-response-failed", []string{"codex-real-response-failed-logs.json"}, "codex"},
		{"codex-real-stream-errors-traces", []string{"codex-real-stream-errors-traces.json"}, "codex"},
		{"unknown", []string{"unknown-traces.json"}, ""},
		// A fleet's telemetry: each client (resource) read by its own mapping.
		{"fleet", []string{"semconv-traces.json", "codex-real-503-503-ok-logs.json", "unknown-traces.json"}, "codex,semconv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ps []Payload
			for _, f := range tt.files {
				ps = append(ps, readPayload(t, f))
			}
			acc := Read(Collect(ps))
			if acc.Mapping != tt.mapping {
				t.Errorf("mapping = %q, want %q", acc.Mapping, tt.mapping)
			}
			got := golden(t, acc)
			path := filepath.Join("testdata", "mappings", tt.name+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./otlp -run TestMappings -update)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("account mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// golden renders an account and its trace v1 events.
func golden(t *testing.T, acc Account) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(acc); err != nil {
		t.Fatal(err)
	}
	b.WriteString("-- trace v1 --\n")
	for _, ev := range acc.Events("r-test", testClassify) {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func TestMappingNamed(t *testing.T) {
	for _, m := range mappings {
		got, err := MappingNamed(m.Name())
		if err != nil || got.Name() != m.Name() {
			t.Errorf("MappingNamed(%q) = %v, %v", m.Name(), got, err)
		}
	}
	if _, err := MappingNamed("nope"); err == nil || !strings.Contains(err.Error(), "claude-code") {
		t.Errorf("MappingNamed(nope) error = %v, want one listing the known mappings", err)
	}
}

// TestAISDKBeforeSemconv shows why ai-sdk comes before semconv in the
// registry: on the AI SDK's real spans with Node's fetch traced (529 three
// times), semconv alone makes a request of each HTTP span (each hangs
// under the chat span of its own attempt, the retried ones never exported,
// and undici sets no http.request.resend_count), where the client made one
// request of three attempts.
func TestAISDKBeforeSemconv(t *testing.T) {
	tel := Collect([]Payload{readPayload(t, "aisdk-real-http-exhausted-traces-1.json"), readPayload(t, "aisdk-real-http-exhausted-traces-2.json")})
	count := func(reqs []Request) (n int) {
		for _, r := range reqs {
			n += len(r.Attempts)
		}
		return n
	}
	sc, _ := semconv{}.Map(tel)
	if got := [2]int{len(sc), count(sc)}; got != [2]int{3, 3} {
		t.Errorf("semconv alone: %d requests, %d attempts; want the misreading this test documents, 3 and 3", got[0], got[1])
	}
	acc := Read(tel)
	if acc.Mapping != "ai-sdk" || len(acc.Requests) != 1 || count(acc.Requests) != 3 {
		t.Errorf("Read: mapping %q, %d requests, %d attempts; want ai-sdk, 1, 3", acc.Mapping, len(acc.Requests), count(acc.Requests))
	}
}
