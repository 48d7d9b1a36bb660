"""The official OpenAI Python SDK (the `openai` package, pinned in
../sdk/requirements.txt), unchanged and with its defaults, as a retrylab
external client: `OpenAI()` reads OPENAI_BASE_URL and OPENAI_API_KEY from the
environment the harness sets and retries with its own loop (2 retries,
0.5 s x 2^n capped at 8 s minus up to 25 %, retry-after-ms / Retry-After up to
120 s, x-should-retry). Each request streams chat.completions.create(stream=
True) and reads it to its end (CLIENT_STREAM=0: a whole answer).
See docs/sdk-clients.md.
"""

import sys

sys.dont_write_bytecode = True  # nothing written beside the client: the run folder is the harness's


import os

import openai

from common import IncompleteStreamError, run, stream_mode

client = openai.OpenAI()
model = os.environ.get("RETRYLAB_MODEL") or "gpt-4o-mini"
messages = [{"role": "user", "content": "Say hello."}]


def one(_):
    if not stream_mode():
        r = client.chat.completions.create(model=model, messages=messages)
        c = r.choices[0]
        return f"{len(c.message.content or '')} characters, finish_reason {c.finish_reason}"
    text, finish = "", None
    with client.chat.completions.create(model=model, messages=messages, stream=True) as stream:
        for chunk in stream:
            for c in chunk.choices:
                text += (c.delta.content or "") if c.delta else ""
                finish = c.finish_reason or finish
    if not finish:
        raise IncompleteStreamError(f"stream ended without finish_reason after {len(text)} characters")
    return f"{len(text)} characters, finish_reason {finish}"


run(f"openai-python {openai.__version__}", one)
