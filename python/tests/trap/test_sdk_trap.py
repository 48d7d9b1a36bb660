"""Traps: scenarios the official SDKs fail with their defaults. An agent
that must ride out four overloads in a row needs more than the SDKs' two
retries; the test body succeeds in catching the final error, but the
retrylab verdict (attempts: want 5, got 3) fails each test. .ci/dist.sh runs
this file and requires exit code 1 with both failures and serve's words."""

import anthropic
import openai
import pytest

FOUR_OVERLOADS = {
    "description": "four overloads, then success: needs four retries",
    "attempts": [{"status": 529}, {"status": 529}, {"status": 529}, {"status": 529}],
    "expect": {"outcome": "success", "attempts": 5},
}


def test_openai_survives_four_overloads(retrylab_scenario):
    s = retrylab_scenario(dict(FOUR_OVERLOADS, provider="openai"))
    client = openai.OpenAI(base_url=s.env["OPENAI_BASE_URL"], api_key=s.env["OPENAI_API_KEY"])
    with pytest.raises(openai.APIStatusError):
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Say hello."}])


def test_anthropic_survives_four_overloads(retrylab_scenario):
    s = retrylab_scenario(dict(FOUR_OVERLOADS, provider="anthropic"))
    client = anthropic.Anthropic(base_url=s.env["ANTHROPIC_BASE_URL"], api_key=s.env["ANTHROPIC_API_KEY"])
    with pytest.raises(anthropic.APIStatusError):
        client.messages.create(
            model="claude-haiku-4-5", max_tokens=64, messages=[{"role": "user", "content": "Say hello."}]
        )
