package preset

import (
	"time"

	"github.com/retrylab/retrylab/retry"
)

// GeminiSDK models Google's Gen AI SDK for JavaScript (@google/genai
// 2.18.0, read from src/_api_client.ts: apiCall, processStreamResponse)
// as a client gets it by default: without httpOptions.retryOptions it
// makes one attempt and retries nothing, whatever the status ("if
// (!retryOptions) return runFetch()"). With retryOptions set, it retries
// 408, 429, 500, 502, 503 and 504 and any error fetch throws, 5 attempts,
// 1 s × 2ⁿ capped at 60 s with p-retry's randomize (× 1 to 2), and never
// an error after the response headers (a cut stream, an error frame); that
// mode is not a preset, since nothing turns it on by default.
func GeminiSDK() *retry.Policy {
	t := retry.Strategy{Retry: false, MaxAttempts: 1, InitialDelay: time.Second, MaxDelay: 60 * time.Second,
		Multiplier: 2, Kind: retry.Exponential}
	return &retry.Policy{Name: "gemini-sdk", Enabled: true, Default: t, FailureTypes: map[retry.FailureType]retry.Strategy{}}
}

// GeminiCLI models Gemini CLI (@google/gemini-cli 0.61.0, npm), read from
// its bundle (packages/core/src/utils/retry.ts: retryWithBackoff,
// isRetryableError) and measured against the mock (docs/sdk-clients.md):
//
//   - retried: 429, 499 and every 5xx (rate_limit, overloaded,
//     server_error, provider_unavailable, unsupported_feature, timeout) and
//     the network codes ECONNRESET, ETIMEDOUT, EPIPE, ECONNREFUSED,
//     ENOTFOUND, EAI_AGAIN (connection_error, network_error); a 400 and
//     every other 4xx are not;
//   - 10 attempts (DEFAULT_MAX_ATTEMPTS), 5s × 2ⁿ capped at 30s, each wait
//     ± 30% uniform (measured under a steady 503: 10 attempts, then exit 1,
//     after gaps of 4.9s, 10.6s, 18.2s, 33.4s, 36.5s, 33.9s, 38.3s, 25.1s,
//     38.2s; under 500 × 3: 4.0s, 8.2s, 18.5s);
//   - a 429 whose body carries RetryInfo waits max(the backoff before
//     its jitter, the retryDelay) × (1 + up to 20%) (retryWithBackoff's
//     RetryableQuotaError branch; retryDelay 8s: 9.44s measured, 2s: the
//     5–6s backoff): retryAfter.nominalFloor with jitter 0.2, for
//     rate_limit only; RetryInfo has no date form and there is no
//     retry-after-ms (header: retry-after, noDate: the mock writes a
//     numeric retry-after as RetryInfo). Not modelled: that max also
//     becomes the base the next waits double from;
//   - what fails after the response headers is another loop
//     (GeminiChat.streamWithRetries: a stream without a finishReason or an
//     error thrown mid-stream): an error frame mid-stream (overloaded,
//     server_error, rate_limit, and INVALID_ARGUMENT (stream_parse): chaos probe's
//     journal, re-sent after 1.1s) is re-sent after 1s, 2s, 4s without jitter,
//     4 attempts (gaps 1.03s; 1.03s, 2.01s, 4.01s, then exit 0), and the
//     HTTP loop starts again for each (resends, restart); a stream cut by
//     the server (undici's UND_ERR_SOCKET) is not retried: streamErrors
//     false.
func GeminiCLI() *retry.Policy {
	t := retry.Strategy{Retry: true, MaxAttempts: 10, InitialDelay: 5 * time.Second, MaxDelay: 30 * time.Second,
		Multiplier: 2, Kind: retry.Exponential, Jitter: retry.ProportionalJitter, JitterFraction: 0.3}
	types := withTypes(t, retry.RateLimit, retry.Overloaded, retry.ServerError, retry.ProviderUnavailable, retry.UnsupportedFeature,
		retry.Timeout, retry.ConnectionError, retry.NetworkError)
	quota := t
	quota.RespectRetryAfter = true
	types[retry.RateLimit] = quota
	return &retry.Policy{
		Name: "gemini-cli", Enabled: true, Default: off(t), FailureTypes: types,
		Resends: []retry.Resend{{Streamed: true, Types: []retry.FailureType{retry.Overloaded, retry.ServerError, retry.RateLimit, retry.InvalidRequest, retry.StreamParse}, Restart: true,
			Strategy: retry.Strategy{Retry: true, MaxAttempts: 4, InitialDelay: time.Second, Multiplier: 2,
				Kind: retry.Exponential, Jitter: retry.NoJitter}}},
		RetryAfter: retry.RetryAfter{Header: retry.HeaderRetryAfter, NoDate: true, NominalFloor: true, Jitter: 0.2},
	}
}
