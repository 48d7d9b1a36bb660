"""LangChain for Python's Anthropic chat model (`langchain-anthropic`, pinned
in ../agents/requirements.txt with the `anthropic` SDK under it), unchanged
and with its defaults, as a retrylab external client: ChatAnthropic reads
ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL (chat_models.py: base_url_env
ANTHROPIC_API_URL, then ANTHROPIC_BASE_URL) and hands its max_retries (2) to
the SDK's own loop. Each request streams llm.stream(...) to its end
(CLIENT_STREAM=0: llm.invoke). See docs/agents.md, "Python agents".
"""

import sys

sys.dont_write_bytecode = True  # nothing written beside the client: the run folder is the harness's

import os  # noqa: E402

from langchain_anthropic import ChatAnthropic  # noqa: E402

from common import IncompleteStreamError, run, stream_mode  # noqa: E402

llm = ChatAnthropic(model=os.environ.get("RETRYLAB_MODEL") or "claude-sonnet-4-5", max_tokens=64)


def one(_):
    if not stream_mode():
        m = llm.invoke("Say hello.")
        stop = (m.response_metadata or {}).get("stop_reason")
        return f"{len(m.text)} characters, stop_reason {stop}"
    text, stop = "", None
    for chunk in llm.stream("Say hello."):
        text += chunk.text
        stop = (chunk.response_metadata or {}).get("stop_reason") or stop
    if not stop:
        raise IncompleteStreamError(f"stream ended without stop_reason after {len(text)} characters")
    return f"{len(text)} characters, stop_reason {stop}"


run("langchain-anthropic", one)
