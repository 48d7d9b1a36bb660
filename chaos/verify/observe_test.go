package verify

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// For a client without a trace, "try again in 2s" in a fault's message is
// the Retry-After its policy reads when the policy reads messages
// (retryAfter.message), in a response.failed event as in an HTTP body, and
// a header still wins.
func TestInferFailureMessageRetryAfter(t *testing.T) {
	t.Parallel()
	ra := "5"
	const msg = "Rate limit reached. Please try again in 2s."
	for _, tc := range []struct {
		name    string
		fault   scenario.Fault
		kind    string
		message bool
		want    time.Duration // -1: none
	}{
		{"response.failed, policy reads messages", scenario.Fault{Kind: fault.SSEError{Type: "rate_limit_exceeded", Message: msg}}, scenario.FaultSSEError, true, 2 * time.Second},
		{"response.failed, policy reads headers only", scenario.Fault{Kind: fault.SSEError{Type: "rate_limit_exceeded", Message: msg}}, scenario.FaultSSEError, false, -1},
		{"429 body, no header", scenario.Fault{Kind: fault.Status{Status: 429, Message: msg}}, scenario.FaultStatus, true, 2 * time.Second},
		{"429 body and a header: the header wins", scenario.Fault{Kind: fault.Status{Status: 429, Message: msg, RetryAfter: &ra}}, scenario.FaultStatus, true, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &scenario.Scenario{Provider: "openai-responses", Attempts: []scenario.Fault{tc.fault}}
			policy := map[string]any{"preset": "openai-sdk", "streamErrors": true, "retryAfter": map[string]any{"message": tc.message}}
			if err := sc.Client.Policy.Encode(policy); err != nil {
				t.Fatal(err)
			}
			pol, err := scenario.PolicyFor(sc)
			if err != nil {
				t.Fatal(err)
			}
			in := inferFailure(sc, pol, 0, mock.ServerAttempt{N: 1, Fault: tc.kind, Ended: time.Now()})
			g := time.Duration(-1)
			if in.retryAfter != nil {
				g = *in.retryAfter
			}
			if g != tc.want || in.ft != "rate_limit" {
				t.Errorf("inferFailure = %s, retry-after %v; want rate_limit, %v", in.ft, g, tc.want)
			}
		})
	}
}

func TestObserve(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	at := func(n int, fault string, status int, arrived, ended int) mock.ServerAttempt {
		return mock.ServerAttempt{N: n, Fault: fault, Status: status, Arrived: t0.Add(ms(arrived)), Ended: t0.Add(ms(ended))}
	}
	sc := parse(t, "obs", `
requests: 2
attempts: [{status: 400}, {status: 529}]
`)
	attempts := []mock.ServerAttempt{at(1, "status", 400, 0, 10), at(2, "status", 529, 15, 20), at(3, "ok", 200, 220, 230)}
	tests := []struct {
		name        string
		trace       string
		clientTrace bool
		waits       []Wait
		types       []string
		gz          bool     // written as trace.jsonl.gz
		notes       []string // prefixes of the notes
	}{
		{
			name: "no trace: boundaries from the faults and the policy, types inferred",
			// The 400 ended request 1: the policy (anthropic-sdk) does not
			// retry it, and the scenario makes 2 requests.
			waits: []Wait{{After: 2, Gap: ms(200)}},
			types: []string{"invalid_request", "overloaded"},
		},
		{
			name: "full trace: boundaries from ProviderRequestFinished",
			trace: `{"v":1,"type":"RetryAttempt","payload":{"attempt":1,"failureType":"invalid_request","willRetry":false}}
{"v":1,"type":"ProviderRequestFinished","payload":{"success":false,"retries":0}}
{"v":1,"type":"RetryAttempt","payload":{"attempt":1,"failureType":"overloaded","willRetry":true,"delayMs":2000}}
{"v":1,"type":"ProviderRequestFinished","payload":{"success":true,"retries":1}}
`,
			clientTrace: true,
			waits:       []Wait{{After: 2, Gap: ms(200)}},
			types:       []string{"invalid_request", "overloaded"},
		},
		{
			name:  "trace without RetryAttempt: failures inferred",
			trace: "{\"v\":1,\"type\":\"ProviderRequestFinished\",\"payload\":{\"success\":false,\"retries\":0}}\n{\"v\":1,\"type\":\"ProviderRequestFinished\",\"payload\":{\"success\":true,\"retries\":1}}\n",
			waits: []Wait{{After: 2, Gap: ms(200)}},
			types: []string{"invalid_request", "overloaded"},
		},
		{
			// Regression: a failed request with 0 retries and no
			// RetryAttempt was taken for a full trace, and its 400 was
			// reported as failure types "none".
			name:  "trace of retries: 0 only, one request failed: failures inferred",
			trace: "{\"v\":1,\"type\":\"ProviderRequestFinished\",\"payload\":{\"success\":false,\"retries\":0}}\n{\"v\":1,\"type\":\"ProviderRequestFinished\",\"payload\":{\"success\":true,\"retries\":0}}\n",
			waits: []Wait{{After: 2, Gap: ms(200)}},
			types: []string{"invalid_request", "overloaded"},
		},
		{
			name: "garbage lines are skipped and named",
			trace: `{"v":1,"type":"RetryAttempt","payload":{"attempt":1,"failureType":"invalid_request","willRetry":false}}
this is not json
{"v":1,"type":"ProviderRequestFinished","payload":{"success":false,"retries":0}}
{"v":1,"type":"RetryAttempt","payload":{"attempt":1,"failureType":"overloaded","willRetry":true,"delayMs":2000}}
{"v":1,"type":"ProviderRequestFinished","payload":{"success":true,"retries":1}}
{"v":1,`,
			clientTrace: true,
			waits:       []Wait{{After: 2, Gap: ms(200)}},
			types:       []string{"invalid_request", "overloaded"},
			notes:       []string{"trace.jsonl:2: ", "trace.jsonl:6: truncated last line"},
		},
		{
			name: "gzip trace",
			trace: `{"v":1,"type":"RetryAttempt","payload":{"attempt":1,"failureType":"invalid_request","willRetry":false}}
{"v":1,"type":"ProviderRequestFinished","payload":{"success":false,"retries":0}}
{"v":1,"type":"RetryAttempt","payload":{"attempt":1,"failureType":"overloaded","willRetry":true,"delayMs":2000}}
{"v":1,"type":"ProviderRequestFinished","payload":{"success":true,"retries":1}}
`,
			gz:          true,
			clientTrace: true,
			waits:       []Wait{{After: 2, Gap: ms(200)}},
			types:       []string{"invalid_request", "overloaded"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trace.jsonl")
			if tt.trace != "" {
				data, name := []byte(tt.trace), path
				if tt.gz {
					var b bytes.Buffer
					zw := gzip.NewWriter(&b)
					zw.Write(data)
					zw.Close()
					data, name = b.Bytes(), path+".gz"
				}
				if err := os.WriteFile(name, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ob, notes := Observe(sc, attempts, path, 1)
			if len(notes) != len(tt.notes) {
				t.Errorf("notes = %q, want %d starting %q", notes, len(tt.notes), tt.notes)
			}
			for i := range min(len(notes), len(tt.notes)) {
				if !strings.HasPrefix(notes[i], tt.notes[i]) {
					t.Errorf("note %d = %q, want it to start %q", i, notes[i], tt.notes[i])
				}
			}
			if ob.ClientTrace != tt.clientTrace {
				t.Errorf("ClientTrace = %v, want %v", ob.ClientTrace, tt.clientTrace)
			}
			if diff := cmp.Diff(tt.waits, ob.ServerWaits); diff != "" {
				t.Errorf("ServerWaits mismatch (-want +got):\n%s", diff)
			}
			got, _ := ob.FailureTypes()
			if diff := cmp.Diff(tt.types, got); diff != "" {
				t.Errorf("failure types mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInferFailureRetryAfterHeaders: retry-after-ms and retry-after given
// via headers: are read as the scenario's policy reads them: the SDKs read
// retry-after-ms first; forgeflare (seed 000) knows retry-after only.
func TestInferFailureRetryAfterHeaders(t *testing.T) {
	ended := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	ra := "2"
	for _, tc := range []struct {
		name  string
		fault scenario.Fault
		want  time.Duration // -1: none
	}{
		{"retry-after-ms header", scenario.Fault{Kind: fault.Status{Status: 429, Headers: map[string]string{"retry-after-ms": "1500"}}}, 1500 * time.Millisecond},
		{"retry-after header", scenario.Fault{Kind: fault.Status{Status: 429, Headers: map[string]string{"Retry-After": "3"}}}, 3 * time.Second},
		{"ms wins over retryAfter", scenario.Fault{Kind: fault.Status{Status: 429, RetryAfter: &ra, Headers: map[string]string{"retry-after-ms": "250"}}}, 250 * time.Millisecond},
		{"retryAfter field", scenario.Fault{Kind: fault.Status{Status: 429, RetryAfter: &ra}}, 2 * time.Second},
		{"none", scenario.Fault{Kind: fault.Status{Status: 429}}, -1},
		{"forgeflare: retry-after-ms alone is not read", scenario.Fault{Kind: fault.Status{Status: 429, Headers: map[string]string{"retry-after-ms": "3000"}}}, -1},
		{"forgeflare: retry-after wins over retry-after-ms", scenario.Fault{Kind: fault.Status{Status: 429, RetryAfter: &ra, Headers: map[string]string{"retry-after-ms": "1500"}}}, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &scenario.Scenario{Provider: wire.ProviderAnthropic, Attempts: []scenario.Fault{tc.fault}}
			if strings.HasPrefix(tc.name, "forgeflare") {
				if err := sc.Client.Policy.Encode("forgeflare"); err != nil {
					t.Fatal(err)
				}
			}
			pol, err := scenario.PolicyFor(sc)
			if err != nil {
				t.Fatal(err)
			}
			got := inferFailure(sc, pol, 0, mock.ServerAttempt{N: 1, Fault: scenario.FaultStatus, Status: 429, Ended: ended}).retryAfter
			g := time.Duration(-1)
			if got != nil {
				g = *got
			}
			if g != tc.want {
				t.Errorf("retry-after = %v, want %v", g, tc.want)
			}
		})
	}
}
