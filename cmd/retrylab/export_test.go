package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// roundTripTrace is trace v1 of two runs: retries with statuses and waits,
// a request that succeeds at once, one that gives up, and a line of
// another type (a log record of the export).
const roundTripTrace = `{"v":1,"ts":"2026-11-21T10:00:00.100Z","type":"RunStarted","runId":"r1","payload":{}}
{"v":1,"ts":"2026-11-21T10:00:00.200Z","type":"RetryAttempt","runId":"r1","payload":{"provider":"anthropic","model":"claude-haiku-4-5","attempt":1,"maxAttempts":4,"failureType":"overloaded","status":529,"errorMessage":"Overloaded","willRetry":true,"delayMs":2000,"delaySource":"backoff"}}
{"v":1,"ts":"2026-11-21T10:00:02.300Z","type":"RetryAttempt","runId":"r1","payload":{"provider":"anthropic","model":"claude-haiku-4-5","attempt":2,"maxAttempts":4,"failureType":"rate_limit","status":429,"errorMessage":"rate limited","willRetry":true,"delayMs":4000,"delaySource":"retry-after"}}
{"v":1,"ts":"2026-11-21T10:00:06.800Z","type":"ProviderRequestFinished","runId":"r1","payload":{"provider":"anthropic","model":"claude-haiku-4-5","durationMs":6700,"success":true,"retries":2}}
{"v":1,"ts":"2026-11-21T10:00:07.100Z","type":"ProviderRequestFinished","runId":"r1","payload":{"provider":"openai","model":"gpt-4o","durationMs":250,"success":true,"retries":0}}
{"v":1,"ts":"2026-11-21T10:01:00.500Z","type":"RetryAttempt","runId":"r2","payload":{"provider":"anthropic","model":"claude-sonnet-4-5","attempt":1,"maxAttempts":2,"failureType":"server_error","status":500,"errorMessage":"Internal server error","willRetry":true,"delayMs":1000,"delaySource":"backoff"}}
{"v":1,"ts":"2026-11-21T10:01:01.900Z","type":"RetryAttempt","runId":"r2","payload":{"provider":"anthropic","model":"claude-sonnet-4-5","attempt":2,"maxAttempts":2,"failureType":"connection_error","errorMessage":"connection reset by peer","willRetry":false,"delayMs":0,"delaySource":"none"}}
{"v":1,"ts":"2026-11-21T10:01:01.900Z","type":"ProviderRequestFinished","runId":"r2","payload":{"provider":"anthropic","model":"claude-sonnet-4-5","durationMs":1600,"success":false,"retries":1,"error":"gave up: connection reset by peer","failureType":"connection_error"}}
`

// TestExportRoundTrip: trace v1 → trace export --format otlp → trace
// analyze gives the same figures as analyzing the trace itself.
func TestExportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "trace.jsonl")
	if err := os.WriteFile(src, []byte(roundTripTrace), 0o644); err != nil {
		t.Fatal(err)
	}
	var export, stderr bytes.Buffer
	if err := run(context.Background(), []string{"trace", "export", "--format", "otlp", src}, &export, &stderr); err != nil {
		t.Fatalf("export: %v\n%s", err, stderr.String())
	}
	if n := strings.Count(export.String(), "\n"); n != 3 {
		t.Errorf("export has %d lines, want 3 (r1's spans and its RunStarted, r2's spans):\n%s", n, export.String())
	}
	otel := filepath.Join(dir, "otel.json")
	if err := os.WriteFile(otel, export.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want, got := analyzeJSON(t, src), analyzeJSON(t, otel)
	for _, k := range []string{"requests", "attempts", "groups", "errorMessages"} {
		if diff := cmp.Diff(want[k], got[k]); diff != "" {
			t.Errorf("analyze %s: trace v1 vs its OTLP export mismatch (-want +got):\n%s", k, diff)
		}
	}
	if w, g := want["inputs"].(map[string]any)["runs"], got["inputs"].(map[string]any)["runs"]; w != g {
		t.Errorf("runs: trace %v, export %v", w, g)
	}
}

func analyzeJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	var out, stderr bytes.Buffer
	err := run(context.Background(), []string{"trace", "analyze", "--format", "json", path}, &out, &stderr)
	if err != nil && !strings.Contains(err.Error(), "alert") {
		t.Fatalf("analyze %s: %v\n%s", path, err, stderr.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("analyze %s: %v\n%s", path, err, out.String())
	}
	return m
}
