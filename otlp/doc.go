// Package otlp receives a client's own OpenTelemetry over OTLP/HTTP and
// reads from it the client's account of its provider requests.
//
// A Receiver (receiver.go) listens on 127.0.0.1:0 and accepts
// /v1/traces, /v1/logs and /v1/metrics as the OTLP/HTTP specification
// says: OTLP/JSON (application/json) or protobuf (application/x-protobuf),
// optionally gzip-compressed, any transfer encoding. A good export is
// answered 200 with an empty Export*ServiceResponse in the request's
// encoding; an unknown content type 415, a body that does not decode 400,
// a body over Limits.Body 413. What one client may send is bounded
// (Limits): past a bound an export is still answered but not kept, and
// counted in Stats. The wire types are the OpenTelemetry Collector's pdata.
//
// What was kept becomes an Account (account.go) through the first
// Mapping (mapping.go) that recognises it, in the registry's order: Claude
// Code's spans and events (map_claudecode.go), Codex CLI's events
// (map_codex.go), the Vercel AI SDK's spans (map_aisdk.go), then the OpenTelemetry semantic conventions for HTTP
// client spans of answer endpoints (AttemptEndpoint, endpoint.go) grouped
// by their gen_ai span or http.request.resend_count, and gen_ai spans alone
// (map_semconv.go). A span or log record received twice counts once.
// Telemetry no mapping uses is counted (Account.Unknown), said in
// Account.Notes and otherwise ignored. An Account is
// turned into trace v1 events (RetryAttempt, ProviderRequestFinished) by
// Account.Events.
package otlp
