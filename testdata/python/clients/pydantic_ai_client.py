"""A pydantic-ai agent (`pydantic-ai-slim[anthropic,openai]`, pinned in
../agents/requirements.txt), unchanged and with its defaults, as a retrylab
external client: Agent("anthropic:MODEL") builds its AnthropicProvider from
ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL (the SDK client reads the base URL
variable when none is given), and makes no HTTP retries of its own: they are
the anthropic SDK's (max_retries 2). Each request runs the agent with
run_stream and reads the text to its end (CLIENT_STREAM=0: run_sync).
See docs/agents.md, "Python agents".
"""

import sys

sys.dont_write_bytecode = True  # nothing written beside the client: the run folder is the harness's

import asyncio  # noqa: E402
import os  # noqa: E402

os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")  # its banner on stderr, nothing else

from pydantic_ai import Agent  # noqa: E402

from common import run, stream_mode  # noqa: E402

agent = Agent("anthropic:" + (os.environ.get("RETRYLAB_MODEL") or "claude-sonnet-4-5"))


async def streamed():
    async with agent.run_stream("Say hello.") as result:
        text = ""
        async for text in result.stream_text():
            pass
        return f"{len(text)} characters"


def one(_):
    if not stream_mode():
        r = agent.run_sync("Say hello.")
        return f"{len(r.output)} characters"
    return asyncio.run(streamed())


run("pydantic-ai", one)
