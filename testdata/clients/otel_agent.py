#!/usr/bin/env python3
"""A tiny external agent that reports its attempts in OpenTelemetry only.

It sends one non-streaming request to the Anthropic Messages API at
ANTHROPIC_BASE_URL, retrying 429, 5xx and network errors up to 4 attempts
with waits of 50ms, 100ms, 200ms, and writes no trace of its own. It posts
its account as OTLP/JSON spans to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT the way
an OpenTelemetry-instrumented client does (semantic conventions): a gen_ai
"chat" span for the request and, under it, one HTTP CLIENT span per attempt
with http.response.status_code, error.type and http.request.resend_count.
The standard library only; it exits 0 when the request succeeded.

Its first argument says how honest it is: "truthful" (the default), "omit"
(leaves its first attempt out) or "status" (claims 500 where it got 529).
"""
import json
import os
import secrets
import sys
import time
import urllib.error
import urllib.request

BASE = os.environ["ANTHROPIC_BASE_URL"].rstrip("/")
KEY = os.environ.get("ANTHROPIC_API_KEY", "")
MODEL = os.environ.get("RETRYLAB_MODEL", "claude-haiku-4-5")
OTLP = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or (
    os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").rstrip("/") + "/v1/traces")
MODE = sys.argv[1] if len(sys.argv) > 1 else "truthful"
WAITS = [0.05, 0.1, 0.2]


def attempt():
    """One HTTP attempt: (status or None, error.type or None)."""
    body = json.dumps({"model": MODEL, "max_tokens": 16, "stream": False,
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    req = urllib.request.Request(BASE + "/v1/messages", data=body, method="POST", headers={
        "content-type": "application/json", "x-api-key": KEY, "anthropic-version": "2023-06-01"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            resp.read()
            return resp.status, None
    except urllib.error.HTTPError as e:
        e.read()
        return e.code, str(e.code)
    except (urllib.error.URLError, OSError) as e:
        return None, type(e).__name__


def attr(key, value):
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def main():
    trace_id = secrets.token_hex(16)
    parent = secrets.token_hex(8)
    start = time.time_ns()
    spans, ok = [], False
    for n in range(4):
        t0 = time.time_ns()
        status, err = attempt()
        t1 = time.time_ns()
        claimed = status
        if MODE == "status" and status == 529:
            claimed = 500
        attrs = [attr("http.request.method", "POST"), attr("url.full", BASE + "/v1/messages")]
        if n > 0:
            attrs.append(attr("http.request.resend_count", n))
        if claimed is not None:
            attrs.append(attr("http.response.status_code", claimed))
        if err:
            attrs.append(attr("error.type", str(claimed) if claimed else err))
        span = {"traceId": trace_id, "spanId": secrets.token_hex(8), "parentSpanId": parent,
                "name": "POST", "kind": 3, "startTimeUnixNano": str(t0), "endTimeUnixNano": str(t1),
                "attributes": attrs, "status": {"code": 2} if err else {}}
        if not (MODE == "omit" and n == 0):
            spans.append(span)
        if err is None:
            ok = True
            break
        if n < len(WAITS):
            time.sleep(WAITS[n])
    spans.insert(0, {"traceId": trace_id, "spanId": parent, "name": "chat " + MODEL, "kind": 3,
                     "startTimeUnixNano": str(start), "endTimeUnixNano": str(time.time_ns()),
                     "attributes": [attr("gen_ai.operation.name", "chat"),
                                    attr("gen_ai.provider.name", "anthropic"),
                                    attr("gen_ai.request.model", MODEL)],
                     "status": {} if ok else {"code": 2}})
    export = {"resourceSpans": [{"resource": {"attributes": [attr("service.name", "otel-agent")]},
                                 "scopeSpans": [{"scope": {"name": "otel_agent"}, "spans": spans}]}]}
    req = urllib.request.Request(OTLP, data=json.dumps(export).encode(), method="POST",
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        resp.read()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
