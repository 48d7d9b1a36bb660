package retry

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// wait is the part of a RetryAttempt that says how long the client waited
// and why.
type wait struct {
	DelayMs      int64
	Source       string
	RetryAfterMs *int64
}

func waitsOf(evs []trace.RetryAttempt) []wait {
	var out []wait
	for _, ev := range evs {
		if ev.WillRetry {
			out = append(out, wait{ev.DelayMs, ev.DelaySource, ev.RetryAfterMs})
		}
	}
	return out
}

// TestForgeflareIgnoresRetryAfterMs: seed 000 parses the retry-after header
// only. Regression: forgeflare read retry-after-ms first, as the SDKs do, so
// a 429 with only retry-after-ms: 3000 waited 3s (the seed: the 2s backoff)
// and one with retry-after: 5 and retry-after-ms: 1500 waited 1.5s (the
// seed: 5s). The SDK presets still read retry-after-ms first.
func TestForgeflareIgnoresRetryAfterMs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		preset  string
		headers map[string]string
		want    wait
	}{
		{"retry-after-ms alone: backoff", "forgeflare", map[string]string{"Retry-After-Ms": "3000"},
			wait{2000, trace.DelayBackoff, nil}},
		{"retry-after and retry-after-ms: retry-after", "forgeflare", map[string]string{"Retry-After": "5", "Retry-After-Ms": "1500"},
			wait{5000, trace.DelayRetryAfter, ptr(int64(5000))}},
		{"retry-after alone", "forgeflare", map[string]string{"Retry-After": "5"},
			wait{5000, trace.DelayRetryAfter, ptr(int64(5000))}},
		{"anthropic-sdk reads retry-after-ms first", "anthropic-sdk", map[string]string{"Retry-After": "5", "Retry-After-Ms": "1500"},
			wait{1500, trace.DelayRetryAfter, ptr(int64(1500))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := waitsOf(runWire(t, mustPreset(t, tt.preset), wireAttempt{429, tt.headers}))
			if diff := cmp.Diff([]wait{tt.want}, got); diff != "" {
				t.Errorf("waits mismatch (-want +got):\n%s", diff)
			}
			// A harness that has only the headers reads the same value, and
			// the envelope for it is the wait the client made.
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			p := mustPreset(t, tt.preset)
			ra, has := p.ReadRetryAfter(h, time.Now())
			lo, hi, ok := p.Envelope(RateLimit, 1, ra, has)
			w := time.Duration(tt.want.DelayMs) * time.Millisecond
			if !ok || lo > w || hi < w {
				t.Errorf("Envelope(ReadRetryAfter) = [%v, %v] ok=%v, want it to hold %v", lo, hi, ok, w)
			}
		})
	}
}

// TestForgeflareTransportErrorsPermanent: seed 000 R1 retries an HTTP error
// only for 429, 503, 529 and other statuses ≥ 500, and a transport error
// only when it is a timeout or a failure to connect; everything else is
// permanent. Regression: an unsupported URL scheme, an HTTP server behind an
// https URL ("server gave HTTP response to HTTPS client") and an HTTP 304
// were retried four times. The SDK presets retry the two transport errors
// (every SDK retries every error that has no response) but not the 304
// (the Node and Python SDKs raise it as a non-retryable status error; the Go
// SDKs return it as a response).
func TestForgeflareTransportErrorsPermanent(t *testing.T) {
	t.Parallel()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotModified)
	}))
	t.Cleanup(plain.Close)
	tests := []struct {
		name     string
		baseURL  string
		wantType FailureType
		sdk      int // attempts under anthropic-sdk
	}{
		{"unsupported URL scheme", "ftp://127.0.0.1:1", NetworkError, 3},
		{"HTTP server on an https URL", strings.Replace(plain.URL, "http:", "https:", 1), NetworkError, 3},
		{"HTTP 304", plain.URL, Unknown, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := runAt(t, mustPreset(t, "forgeflare"), tt.baseURL)
			if len(evs) != 1 || evs[0].WillRetry || evs[0].FailureType != string(tt.wantType) {
				t.Errorf("forgeflare: %+v, want one attempt failing for good as %s", evs, tt.wantType)
			}
			if evs := runAt(t, mustPreset(t, "anthropic-sdk"), tt.baseURL); len(evs) != tt.sdk {
				t.Errorf("anthropic-sdk: %d attempts, want %d", len(evs), tt.sdk)
			}
		})
	}
}

// TestEpicRetryableErrorsKeepsSeed004: retryableErrors takes seed 004's
// ErrorType names with seed 004's meaning. Regression: [rate_limit,
// server_error, timeout] on escalation-epic retried 529, 501 and 408, which
// the preset alone does not: the list read server_error as every 5xx and
// timeout as retrylab's timeout (408 and 504 included), and dropped the
// preset's status rules. Seed 004 retries 429, 500, 502, 503, 504 and
// client-side timeouts, nothing else (505 included, which the preset used
// to retry as server_error).
func TestEpicRetryableErrorsKeepsSeed004(t *testing.T) {
	t.Parallel()
	listed, err := TestPolicies.Parse([]byte("preset: escalation-epic\nretryableErrors: [rate_limit, server_error, timeout]\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	quota := h(429, "insufficient_quota", "", "You exceeded your current quota")
	tests := []struct {
		name  string
		err   error
		retry bool
	}{
		{"429", httpErr(429), true},
		{"429 quota", quota, true},
		{"500", httpErr(500), true},
		{"502", httpErr(502), true},
		{"503", httpErr(503), true},
		{"504", httpErr(504), true},
		{"client-side timeout", &provider.Error{Kind: provider.KindTimeout, Provider: "anthropic"}, true},
		{"408", httpErr(408), false},
		{"409", httpErr(409), false},
		{"501", httpErr(501), false},
		{"505", httpErr(505), false},
		{"529", httpErr(529), false},
		{"400", httpErr(400), false},
		{"401", httpErr(401), false},
		{"connection reset", &provider.Error{Kind: provider.KindReset, Provider: "anthropic"}, false},
		{"SSE overloaded_error", sseErr("overloaded_error"), false},
	}
	for _, tt := range tests {
		for name, p := range map[string]*Policy{"preset": mustPreset(t, "escalation-epic"), "listed": listed} {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					want := 1
					if tt.retry {
						want = 2
					}
					got := doFake(t, &Retrier{Policy: p}, tt.err)
					if len(got.models) != want {
						t.Errorf("%d attempts, want %d (retried: %v)", len(got.models), want, tt.retry)
					}
				})
			})
		}
	}
	if diff := cmp.Diff(mustPreset(t, "escalation-epic").String(), listed.String()); diff != "" {
		t.Errorf("the list changed the preset (-preset +listed):\n%s", diff)
	}
}

// TestParseEpicStyle: seed 004's RetryPolicy field names, written inline.
func TestParseEpicStyle(t *testing.T) {
	t.Parallel()
	src := "preset: escalation-epic\nmaxRetries: 2\ninitialDelay: 500ms\nretryableErrors: [rate_limit, server_error]\nescalateAfterRetries: 1\n"
	p, err := TestPolicies.Parse([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{500 * time.Millisecond, time.Second}, p.Schedule(RateLimit)); diff != "" {
		t.Errorf("schedule mismatch (-want +got):\n%s", diff)
	}
	if p.Escalation.AfterRetries != 1 {
		t.Errorf("afterRetries = %d", p.Escalation.AfterRetries)
	}
	retried := map[FailureType]bool{}
	for _, ft := range FailureTypes {
		if p.typeRetried(ft) {
			retried[ft] = true
		}
	}
	// Seed 004's server_error is 500 (server_error), 502
	// (provider_unavailable), 503 (overloaded) and 504 (timeout).
	// A logical failure (US-002) is not an error of seed 004's classifier:
	// the list leaves the preset's retry of it alone.
	want := map[FailureType]bool{RateLimit: true, QuotaExhausted: true, ServerError: true, Overloaded: true, ProviderUnavailable: true, Timeout: true,
		LogicalFailure: true}
	if diff := cmp.Diff(want, retried); diff != "" {
		t.Errorf("retried types mismatch (-want +got):\n%s", diff)
	}
	// Regression: retryableErrors: [server_error] did not retry a 504.
	for _, tt := range []struct {
		c    Classification
		want bool
	}{
		{Classification{Type: ServerError, Status: 500}, true},
		{Classification{Type: ProviderUnavailable, Status: 502}, true},
		{Classification{Type: Overloaded, Status: 503}, true},
		{Classification{Type: Timeout, Status: 504}, true},
		{Classification{Type: QuotaExhausted, Status: 429}, true},
		{Classification{Type: Overloaded, Status: 529}, false},
		{Classification{Type: UnsupportedFeature, Status: 501}, false},
		{Classification{Type: ServerError, Status: 505}, false},
		{Classification{Type: Timeout, Status: 408}, false},
		{Classification{Type: Timeout}, false}, // a client-side timeout is seed 004's timeout, not listed
	} {
		if got := p.retries(tt.c, p.Strategy(tt.c.Type)); got != tt.want {
			t.Errorf("retries(%s %d) = %v, want %v", tt.c.Type, tt.c.Status, got, tt.want)
		}
	}
	_, err = TestPolicies.Parse([]byte("retryableErrors: [flaky]\n"), "p.yaml")
	if err == nil || !strings.Contains(err.Error(), `p.yaml:1:19: retryableErrors: unknown failure type "flaky"`) {
		t.Errorf("err = %v", err)
	}
}
