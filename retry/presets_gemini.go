package retry

import "time"

// GeminiSDK models Google's Gen AI SDK for JavaScript (@google/genai
// 2.18.0, read from src/_api_client.ts: apiCall, processStreamResponse)
// as a client gets it by default: without httpOptions.retryOptions it
// makes one attempt and retries nothing, whatever the status ("if
// (!retryOptions) return runFetch()"). With retryOptions set, it retries
// 408, 429, 500, 502, 503 and 504 and any error fetch throws, 5 attempts,
// 1 s × 2ⁿ capped at 60 s with p-retry's randomize (× 1 to 2), and never
// an error after the response headers (a cut stream, an error frame); that
// mode is not a preset, since nothing turns it on by default.
func GeminiSDK() *Policy {
	t := Strategy{Retry: false, MaxAttempts: 1, InitialDelay: time.Second, MaxDelay: 60 * time.Second,
		Multiplier: 2, Kind: Exponential}
	return &Policy{Name: "gemini-sdk", Enabled: true, Default: t, FailureTypes: map[FailureType]Strategy{}}
}
