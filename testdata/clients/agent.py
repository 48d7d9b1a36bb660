#!/usr/bin/env python3
"""A tiny external agent for `retrylab chaos run`: the standard library only.

It sends RETRYLAB_REQUESTS streaming requests to the Anthropic Messages API at
ANTHROPIC_BASE_URL with ANTHROPIC_API_KEY, retries 429, 5xx, network errors
and broken streams with 1s, 2s, 4s, 8s (times RETRYLAB_TIME_SCALE, recorded in
policy time), writes one RetryAttempt per failed attempt and one
ProviderRequestFinished per request to RETRYLAB_TRACE (trace format v1), and
exits 0 when every request succeeded, 1 otherwise. It never prints the key.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

BASE = os.environ["ANTHROPIC_BASE_URL"].rstrip("/")
KEY = os.environ.get("ANTHROPIC_API_KEY", "")
MODEL = os.environ.get("RETRYLAB_MODEL", "claude-haiku-4-5")
REQUESTS = int(os.environ.get("RETRYLAB_REQUESTS", "1"))
SCALE = float(os.environ.get("RETRYLAB_TIME_SCALE", "1"))
TRACE = os.environ.get("RETRYLAB_TRACE")
BACKOFF = [1.0, 2.0, 4.0, 8.0]
TYPES = {429: "rate_limit", 500: "server_error", 502: "provider_unavailable", 503: "overloaded", 529: "overloaded"}


def emit(typ, payload):
    if not TRACE:
        return
    line = json.dumps({"v": 1, "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "type": typ, "payload": payload}) + "\n"
    fd = os.open(TRACE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def attempt():
    """Returns (failure_type, status) or (None, 200) on success."""
    body = json.dumps({"model": MODEL, "max_tokens": 64, "stream": True,
                       "messages": [{"role": "user", "content": "Say hello."}]}).encode()
    req = urllib.request.Request(BASE + "/v1/messages", data=body, method="POST", headers={
        "content-type": "application/json", "x-api-key": KEY, "anthropic-version": "2023-06-01"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            text = resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return TYPES.get(e.code, "server_error" if e.code >= 500 else "invalid_request"), e.code
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return "connection_error", 0
    except Exception:  # http.client.IncompleteRead and friends
        return "stream_interrupted", 200
    if "event: error" in text:
        return "overloaded", 200
    if "message_stop" not in text:
        return "stream_interrupted", 200
    return None, 200


def request():
    start = time.monotonic()
    n = 0
    while True:
        n += 1
        ft, status = attempt()
        if ft is None:
            emit("ProviderRequestFinished", {"provider": "anthropic", "model": MODEL, "success": True,
                                             "retries": n - 1, "durationMs": int((time.monotonic() - start) * 1000)})
            return True
        retry = ft not in ("invalid_request",) and n <= len(BACKOFF)
        delay = BACKOFF[n - 1] if retry else 0
        emit("RetryAttempt", {"provider": "anthropic", "model": MODEL, "attempt": n, "maxAttempts": len(BACKOFF) + 1,
                              "failureType": ft, "status": status, "errorMessage": ft, "willRetry": retry,
                              "delayMs": int(delay * 1000), "delaySource": "backoff" if retry else "none"})
        print(f"[agent] attempt {n}: {ft} ({status})" + (f" — waiting {delay:g}s" if retry else ""), file=sys.stderr)
        if not retry:
            emit("ProviderRequestFinished", {"provider": "anthropic", "model": MODEL, "success": False, "retries": n - 1,
                                             "failureType": ft, "durationMs": int((time.monotonic() - start) * 1000)})
            return False
        time.sleep(delay * SCALE)


ok = all([request() for _ in range(REQUESTS)])
print("ok" if ok else "failed")
sys.exit(0 if ok else 1)
