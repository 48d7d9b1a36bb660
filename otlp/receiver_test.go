package otlp

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

func startReceiver(t *testing.T, cfg Config) *Receiver {
	t.Helper()
	r, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReceiver posts exports as OTLP/HTTP exporters do and checks each
// answer as the specification says.
func TestReceiver(t *testing.T) {
	tracesJSON, err := os.ReadFile(filepath.Join("testdata", "mappings", "semconv-traces.json"))
	if err != nil {
		t.Fatal(err)
	}
	logsJSON, err := os.ReadFile(filepath.Join("testdata", "mappings", "codex-real-503-503-ok-logs.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseJSON(tracesJSON)
	if err != nil {
		t.Fatal(err)
	}
	tracesProto, err := ptraceotlp.NewExportRequestFromTraces(p.Traces).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, contentType, encoding string
		body                              []byte
		chunked                           bool
		wantCode                          int
		wantType                          string // response Content-Type, on 200
		wantItems                         int    // spans or log records kept
	}{
		{name: "json traces", path: "/v1/traces", contentType: "application/json", body: tracesJSON,
			wantCode: 200, wantType: "application/json", wantItems: 5},
		{name: "json logs", path: "/v1/logs", contentType: "application/json; charset=utf-8", body: logsJSON,
			wantCode: 200, wantType: "application/json", wantItems: 10},
		{name: "protobuf traces", path: "/v1/traces", contentType: "application/x-protobuf", body: tracesProto,
			wantCode: 200, wantType: "application/x-protobuf", wantItems: 5},
		{name: "gzip json", path: "/v1/traces", contentType: "application/json", encoding: "gzip", body: gz(t, tracesJSON),
			wantCode: 200, wantType: "application/json", wantItems: 5},
		{name: "gzip protobuf chunked", path: "/v1/traces", contentType: "application/x-protobuf", encoding: "gzip",
			body: gz(t, tracesProto), chunked: true, wantCode: 200, wantType: "application/x-protobuf", wantItems: 5},
		{name: "chunked json", path: "/v1/logs", contentType: "application/json", body: logsJSON, chunked: true,
			wantCode: 200, wantType: "application/json", wantItems: 10},
		{name: "empty metrics", path: "/v1/metrics", contentType: "application/json", body: []byte(`{"resourceMetrics":[]}`),
			wantCode: 200, wantType: "application/json"},
		{name: "oversize", path: "/v1/traces", contentType: "application/json", body: bytes.Repeat([]byte(" "), 70<<10),
			wantCode: 413},
		{name: "oversize once gunzipped", path: "/v1/traces", contentType: "application/json", encoding: "gzip",
			body: gz(t, bytes.Repeat([]byte(" "), 70<<10)), wantCode: 413},
		{name: "oversize chunked", path: "/v1/traces", contentType: "application/json", body: bytes.Repeat([]byte(" "), 70<<10),
			chunked: true, wantCode: 413},
		{name: "wrong content type", path: "/v1/traces", contentType: "text/plain", body: tracesJSON, wantCode: 415},
		{name: "no content type", path: "/v1/traces", body: tracesJSON, wantCode: 415},
		{name: "unknown content encoding", path: "/v1/traces", contentType: "application/json", encoding: "br", body: tracesJSON, wantCode: 415},
		{name: "bad json", path: "/v1/traces", contentType: "application/json", body: []byte(`{"resourceSpans":[{`), wantCode: 400},
		{name: "bad protobuf", path: "/v1/logs", contentType: "application/x-protobuf", body: []byte{0xff, 0xff, 0xff}, wantCode: 400},
		{name: "bad gzip", path: "/v1/logs", contentType: "application/json", encoding: "gzip", body: []byte("not gzip"), wantCode: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startReceiver(t, Config{Limits: Limits{Body: 64 << 10}})
			var body io.Reader = bytes.NewReader(tt.body)
			if tt.chunked {
				body = io.MultiReader(bytes.NewReader(tt.body)) // no length: sent chunked
			}
			req, err := http.NewRequest(http.MethodPost, r.URL()+tt.path, body)
			if err != nil {
				t.Fatal(err)
			}
			if tt.chunked && req.ContentLength != 0 {
				t.Fatalf("ContentLength = %d, want unknown (chunked)", req.ContentLength)
			}
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			if tt.encoding != "" {
				req.Header.Set("Content-Encoding", tt.encoding)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			rb, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("status = %d (%s), want %d", resp.StatusCode, rb, tt.wantCode)
			}
			st := r.Stats()
			if tt.wantCode != 200 {
				if st.Rejected != 1 || st.Kept != 0 {
					t.Errorf("stats = %+v, want 1 rejected, none kept", st)
				}
				return
			}
			if got := resp.Header.Get("Content-Type"); got != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", got, tt.wantType)
			}
			checkEmptyResponse(t, tt.path, tt.wantType, rb)
			if st.Kept != 1 || st.Items != tt.wantItems {
				t.Errorf("stats = %+v, want 1 kept with %d items", st, tt.wantItems)
			}
		})
	}
}

// checkEmptyResponse checks that b decodes as an empty Export*ServiceResponse.
func checkEmptyResponse(t *testing.T, path, contentType string, b []byte) {
	t.Helper()
	var err error
	switch {
	case strings.HasSuffix(path, "traces") && contentType == "application/json":
		err = ptraceotlp.NewExportResponse().UnmarshalJSON(b)
	case strings.HasSuffix(path, "traces"):
		err = ptraceotlp.NewExportResponse().UnmarshalProto(b)
	case strings.HasSuffix(path, "logs") && contentType == "application/json":
		err = plogotlp.NewExportResponse().UnmarshalJSON(b)
	}
	if err != nil {
		t.Errorf("response %q does not decode: %v", b, err)
	}
	if contentType == "application/json" && strings.TrimSpace(string(b)) != "{}" {
		t.Errorf("response = %q, want {}", b)
	}
}

// TestReceiverBounds: past Limits.Items an export is answered 200 but not
// kept, and counted.
func TestReceiverBounds(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "mappings", "semconv-traces.json"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var kept []int
	r := startReceiver(t, Config{Limits: Limits{Items: 8}, Keep: func(p Payload, n int) error {
		mu.Lock()
		defer mu.Unlock()
		kept = append(kept, n)
		return nil
	}})
	for range 3 {
		resp, err := http.Post(r.URL()+"/v1/traces", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status = %d, want 200", resp.StatusCode)
		}
	}
	want := Stats{Exports: 3, Kept: 1, Dropped: 2, Items: 5, DroppedItems: 10, Bytes: int64(len(body))}
	if diff := cmp.Diff(want, r.Stats()); diff != "" {
		t.Errorf("Stats() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1}, kept); diff != "" {
		t.Errorf("Keep calls mismatch (-want +got):\n%s", diff)
	}
	if n := len(r.Payloads()); n != 1 {
		t.Errorf("Payloads() = %d exports, want 1", n)
	}
}

func TestReceiverMethodAndEnv(t *testing.T) {
	r := startReceiver(t, Config{})
	resp, err := http.Get(r.URL() + "/v1/traces")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET status = %d, want 405", resp.StatusCode)
	}
	want := []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + r.URL(),
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + r.URL() + "/v1/traces",
		"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=" + r.URL() + "/v1/logs",
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=" + r.URL() + "/v1/metrics",
	}
	if diff := cmp.Diff(want, r.Env()); diff != "" {
		t.Errorf("Env() mismatch (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(r.URL(), "http://127.0.0.1:") {
		t.Errorf("URL() = %q, want loopback", r.URL())
	}
}

// TestReceiverBoundsConcurrent: exports sent at once past Limits.Total are
// all answered 200 and every one is counted, kept or dropped: exports =
// kept + dropped, the kept ones fit the bound, and Payloads holds exactly
// those kept (hostile report finding 14: 1,500 exports answered 200, 334
// kept).
func TestReceiverBoundsConcurrent(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "mappings", "semconv-traces.json"))
	if err != nil {
		t.Fatal(err)
	}
	const sent, fit = 60, 7
	r := startReceiver(t, Config{Limits: Limits{Total: int64(fit * len(body))}})
	if l := r.Limits(); l.Total != int64(fit*len(body)) || l.Items != DefaultItems || l.Body != DefaultBody {
		t.Errorf("Limits() = %+v, want Total %d and the defaults", l, fit*len(body))
	}
	var wg sync.WaitGroup
	codes := make(chan int, sent)
	for range sent {
		wg.Go(func() {
			resp, err := http.Post(r.URL()+"/v1/traces", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != 200 {
			t.Errorf("an export was answered %d, want 200", c)
		}
	}
	st := r.Stats()
	items := st.Items / fit
	want := Stats{Exports: sent, Kept: fit, Dropped: sent - fit, Items: fit * items, DroppedItems: (sent - fit) * items, Bytes: int64(fit * len(body))}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("Stats() mismatch (-want +got):\n%s", diff)
	}
	if n := len(r.Payloads()); n != fit {
		t.Errorf("Payloads() = %d exports, want %d", n, fit)
	}
}
