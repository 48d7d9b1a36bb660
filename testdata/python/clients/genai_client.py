"""Google's Gen AI SDK for Python (the `google-genai` package, pinned in
../sdk/requirements.txt), unchanged and with its defaults, as a retrylab
external client over the Gemini wire format: genai.Client() reads
GEMINI_API_KEY and GOOGLE_GEMINI_BASE_URL from the environment the harness
sets. Without http_options.retry_options it makes one attempt and retries
nothing (google/genai/_api_client.py, retry_args: stop_after_attempt(1)).
Each request streams models.generate_content_stream to its end
(CLIENT_STREAM=0: generate_content). See docs/sdk-clients.md.
"""

import sys

sys.dont_write_bytecode = True  # nothing written beside the client: the run folder is the harness's


import os

from google import genai

from common import IncompleteStreamError, run, stream_mode

client = genai.Client()
model = os.environ.get("RETRYLAB_MODEL") or "gemini-2.5-flash"


def one(_):
    if not stream_mode():
        r = client.models.generate_content(model=model, contents="Say hello.")
        c = r.candidates[0]
        return f"{len(r.text or '')} characters, finishReason {c.finish_reason}"
    text, finish = "", None
    for chunk in client.models.generate_content_stream(model=model, contents="Say hello."):
        text += chunk.text or ""
        for c in chunk.candidates or []:
            finish = c.finish_reason or finish
    if not finish:
        raise IncompleteStreamError(f"stream ended without finishReason after {len(text)} characters")
    return f"{len(text)} characters, finishReason {finish}"


run(f"google-genai {genai.__version__}", one)
