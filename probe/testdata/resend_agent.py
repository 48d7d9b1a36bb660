#!/usr/bin/env python3
"""A client that re-sends a 400 once at once, as Claude Code does (with an
adjusted body), and retries 429 and 5xx after 1s, 2s, 4s (times
RETRYLAB_TIME_SCALE): TestProbeResendPolicyVerifies learns its policy and
verifies it. Standard library only; it writes no trace."""
import json
import os
import sys
import time
import urllib.error
import urllib.request

BASE = os.environ["ANTHROPIC_BASE_URL"].rstrip("/")
SCALE = float(os.environ.get("RETRYLAB_TIME_SCALE", "1"))
REQUESTS = int(os.environ.get("RETRYLAB_REQUESTS", "1"))
BACKOFF = [1.0, 2.0, 4.0]


def attempt(n):
    body = json.dumps({"model": "claude-haiku-4-5", "max_tokens": 64, "stream": True,
                       "messages": [{"role": "user", "content": "Say hello." + " " * n}]}).encode()
    req = urllib.request.Request(BASE + "/v1/messages", data=body, method="POST", headers={
        "content-type": "application/json", "x-api-key": os.environ.get("ANTHROPIC_API_KEY", ""),
        "anthropic-version": "2023-06-01"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return 200 if "message_stop" in resp.read().decode("utf-8", "replace") else 0
    except urllib.error.HTTPError as e:
        return e.code
    except Exception:
        return 0


def request():
    k, resent = 0, 0
    while True:
        status = attempt(k + resent)
        if status == 200:
            return True
        if status == 400 and resent < 1:
            resent += 1
            continue
        if status != 429 and status < 500 or k >= len(BACKOFF):
            return False
        time.sleep(BACKOFF[k] * SCALE)
        k += 1


ok = all([request() for _ in range(REQUESTS)])
print("ok" if ok else "failed")
sys.exit(0 if ok else 1)
