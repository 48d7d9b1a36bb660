"""The official Anthropic Python SDK (the `anthropic` package, pinned in
../sdk/requirements.txt), unchanged and with its defaults, as a retrylab
external client: `Anthropic()` reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY
from the environment the harness sets and retries with its own loop (2
retries, 0.5 s x 2^n capped at 8 s minus up to 25 %, retry-after-ms /
Retry-After up to 60 s, x-should-retry). Each request streams
messages.stream(...) to its end (CLIENT_STREAM=0: messages.create).
See docs/sdk-clients.md.
"""

import sys

sys.dont_write_bytecode = True  # nothing written beside the client: the run folder is the harness's


import os

import anthropic

from common import IncompleteStreamError, run, stream_mode

client = anthropic.Anthropic()
model = os.environ.get("RETRYLAB_MODEL") or "claude-sonnet-4-5"
messages = [{"role": "user", "content": "Say hello."}]


def one(_):
    if not stream_mode():
        m = client.messages.create(model=model, max_tokens=64, messages=messages)
        text = "".join(b.text for b in m.content if b.type == "text")
        return f"{len(text)} characters, stop_reason {m.stop_reason}"
    with client.messages.stream(model=model, max_tokens=64, messages=messages) as stream:
        text = "".join(stream.text_stream)
        m = stream.get_final_message()
    if not m.stop_reason:
        raise IncompleteStreamError(f"stream ended without stop_reason after {len(text)} characters")
    return f"{len(text)} characters, stop_reason {m.stop_reason}"


run(f"anthropic-python {anthropic.__version__}", one)
