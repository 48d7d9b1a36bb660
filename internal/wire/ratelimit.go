package wire

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// RateLimit is the state of the provider account (a scenario's limits:)
// that an answer reports: the format's rate-limit headers on every answer
// (Anthropic's anthropic-ratelimit-*, OpenAI's x-ratelimit-*), and, on the
// answer that refuses a request, the bucket that refused it in the body's
// message (Gemini: a QuotaFailure detail). Without one (Params.RateLimit
// nil) the formats send the fixed headers they always sent.
type RateLimit struct {
	// Buckets are the account's limited buckets, in the order requests,
	// input tokens, output tokens; an unlimited one is left out.
	Buckets []Bucket
	// Limited names the bucket that refused the request (a Bucket's Name,
	// or Concurrency); "" when it was admitted.
	Limited string
	// Wait is, when a bucket refused the request, how long until it would
	// fit (policy time): the body's "try again in" where the format has
	// one. The retry-after header is Fault.RetryAfter.
	Wait time.Duration
}

// The names of the buckets, as Anthropic's headers name them.
const (
	BucketRequests     = "requests"
	BucketInputTokens  = "input-tokens"
	BucketOutputTokens = "output-tokens"
	// Concurrency is RateLimit.Limited for a request refused because too
	// many answers were in flight (an overloaded answer, not a 429).
	Concurrency = "concurrency"
)

// Bucket is one continuous-refill bucket of the account as an answer
// reports it.
type Bucket struct {
	Name      string        // BucketRequests, BucketInputTokens or BucketOutputTokens
	Limit     int           // its capacity: the limit per minute
	Remaining int           // whole units left now (never below 0)
	Reset     time.Duration // until it is full again (policy time)
	Requested int           // what the refused request asked of it (its message)
}

// bucket returns the bucket named name, if the account limits it.
func (r *RateLimit) bucket(name string) (Bucket, bool) {
	for _, b := range r.Buckets {
		if b.Name == name {
			return b, true
		}
	}
	return Bucket{}, false
}

// limited returns the bucket that refused the request, if one did.
func (p Params) limited() (Bucket, bool) {
	if p.RateLimit == nil || p.RateLimit.Limited == "" || p.RateLimit.Limited == Concurrency {
		return Bucket{}, false
	}
	return p.RateLimit.bucket(p.RateLimit.Limited)
}

// RateLimitHeaders are Anthropic's rate-limit headers for the account:
// anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,
// remaining,reset}, reset the moment the bucket is full again, in RFC 3339
// rounded up to the second.
func (anthropic) RateLimitHeaders(p Params) []Header {
	var hs []Header
	for _, b := range p.RateLimit.Buckets {
		pre := "anthropic-ratelimit-" + b.Name + "-"
		reset := p.Now.UTC().Add(b.Reset)
		if t := reset.Truncate(time.Second); !t.Equal(reset) {
			reset = t.Add(time.Second)
		}
		hs = append(hs,
			Header{pre + "limit", strconv.Itoa(b.Limit)},
			Header{pre + "remaining", strconv.Itoa(b.Remaining)},
			Header{pre + "reset", reset.Format(time.RFC3339)})
	}
	return hs
}

// RateLimitHeaders are OpenAI's rate-limit headers for the account:
// x-ratelimit-limit-requests, -limit-tokens, -remaining-requests,
// -remaining-tokens, -reset-requests, -reset-tokens, resets as durations
// ("1s", "6m0s", "120ms"). OpenAI has one token bucket: it is the input
// tokens' when the account limits them, else the output tokens'.
func (openai) RateLimitHeaders(p Params) []Header {
	req, hasReq := p.RateLimit.bucket(BucketRequests)
	tok, hasTok := p.RateLimit.bucket(BucketInputTokens)
	if !hasTok {
		tok, hasTok = p.RateLimit.bucket(BucketOutputTokens)
	}
	var hs []Header
	add := func(has bool, name, v string) {
		if has {
			hs = append(hs, Header{name, v})
		}
	}
	add(hasReq, "x-ratelimit-limit-requests", strconv.Itoa(req.Limit))
	add(hasTok, "x-ratelimit-limit-tokens", strconv.Itoa(tok.Limit))
	add(hasReq, "x-ratelimit-remaining-requests", strconv.Itoa(req.Remaining))
	add(hasTok, "x-ratelimit-remaining-tokens", strconv.Itoa(tok.Remaining))
	add(hasReq, "x-ratelimit-reset-requests", openaiDuration(req.Reset))
	add(hasTok, "x-ratelimit-reset-tokens", openaiDuration(tok.Reset))
	return hs
}

// openaiDuration writes a reset as OpenAI does: a Go-style duration,
// rounded up to the millisecond ("0s" when the bucket is full).
func openaiDuration(d time.Duration) string {
	if r := d.Truncate(time.Millisecond); r != d {
		d = r + time.Millisecond
	}
	return d.String()
}

// perMinute names a bucket's limit as the providers' messages do.
func perMinute(name string) (anthropicUnit, openaiUnit string) {
	switch name {
	case BucketRequests:
		return "requests per minute", "requests per min (RPM)"
	case BucketInputTokens:
		return "input tokens per minute", "tokens per min (TPM)"
	}
	return "output tokens per minute", "tokens per min (TPM)"
}

// anthropicRateLimitMessage is the message of Anthropic's 429 for the
// bucket b.
func anthropicRateLimitMessage(b Bucket) string {
	unit, _ := perMinute(b.Name)
	return fmt.Sprintf("This request would exceed your organization's rate limit of %d %s. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please try again later.", b.Limit, unit)
}

// openaiRateLimitMessage is the message of OpenAI's 429 for the bucket b,
// with its "Please try again in" that clients parse.
func openaiRateLimitMessage(p Params, b Bucket) string {
	_, unit := perMinute(b.Name)
	return fmt.Sprintf("Rate limit reached for %s in organization org-mock on %s: Limit %d, Used %d, Requested %d. Please try again in %s. Visit https://platform.openai.com/account/rate-limits to learn more.",
		p.Model, unit, b.Limit, b.Limit-b.Remaining, b.Requested, openaiDuration(p.RateLimit.Wait))
}

// geminiQuota is the QuotaFailure violation of Gemini's 429 for the
// bucket b: its metric, quota id and value.
func geminiQuota(p Params, b Bucket) geminiViolation {
	metric, id := "generate_content_requests", "GenerateRequestsPerMinutePerProjectPerModel"
	switch b.Name {
	case BucketInputTokens:
		metric, id = "generate_content_input_token_count", "GenerateContentInputTokensPerModelPerMinute"
	case BucketOutputTokens:
		metric, id = "generate_content_output_token_count", "GenerateContentOutputTokensPerModelPerMinute"
	}
	return geminiViolation{QuotaMetric: "generativelanguage.googleapis.com/" + metric, QuotaID: id,
		QuotaDimensions: map[string]string{"location": "global", "model": p.Model}, QuotaValue: strconv.Itoa(b.Limit)}
}

// RetryAfterSeconds is a wait as a retry-after header carries it: whole
// seconds, rounded up as the providers round (a wait of 1.2 s is "2"), so
// that a client that waits exactly that long finds the request fits.
func RetryAfterSeconds(d time.Duration) int {
	return int(math.Ceil(d.Seconds()))
}
