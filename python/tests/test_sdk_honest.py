"""The official openai and anthropic Python SDKs, unchanged and with their
defaults, against honest scenarios: what they do is what the scenarios
expect, so the retrylab verdict passes (.ci/dist.sh runs this file and
requires it green). One scenario inline, one from a file."""

import anthropic
import openai


def test_openai_retries_a_503_and_a_reset(retrylab_scenario):
    s = retrylab_scenario(
        {
            "description": "a 503, a reset, then success: both retried",
            "provider": "openai",
            "attempts": [{"status": 503}, {"reset": {}}],
            "expect": {"outcome": "success", "attempts": 3},
        }
    )
    client = openai.OpenAI(base_url=s.env["OPENAI_BASE_URL"], api_key=s.env["OPENAI_API_KEY"])
    text = ""
    with client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Say hello."}], stream=True
    ) as stream:
        for chunk in stream:
            for c in chunk.choices:
                text += c.delta.content or ""
    assert text


def test_anthropic_retries_an_overload(retrylab_scenario):
    s = retrylab_scenario("scenarios/anthropic-529-then-ok.yaml")
    client = anthropic.Anthropic(base_url=s.env["ANTHROPIC_BASE_URL"], api_key=s.env["ANTHROPIC_API_KEY"])
    with client.messages.stream(
        model="claude-haiku-4-5", max_tokens=64, messages=[{"role": "user", "content": "Say hello."}]
    ) as stream:
        text = stream.get_final_text()
    assert text
