// The official openai and @anthropic-ai/sdk Node SDKs, unchanged and with
// their defaults, against honest scenarios: the retrylab verdict passes
// (.ci/dist.sh runs this file with node --test and requires it green).
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { withScenario } from "retrylab/test";

test("openai retries a 503 and a reset", () =>
  withScenario(
    { provider: "openai", attempts: [{ status: 503 }, { reset: {} }], expect: { outcome: "success", attempts: 3 } },
    async (s) => {
      const client = new OpenAI({ baseURL: s.env.OPENAI_BASE_URL, apiKey: s.env.OPENAI_API_KEY });
      const stream = await client.chat.completions.create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "Say hello." }],
        stream: true,
      });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
      assert.ok(text.length > 0);
    },
    { name: "openai-503-reset" },
  ));

test("anthropic retries an overload", () =>
  withScenario(
    { provider: "anthropic", attempts: [{ status: 529 }], expect: { outcome: "success", attempts: 2 } },
    async (s) => {
      const client = new Anthropic({ baseURL: s.env.ANTHROPIC_BASE_URL, apiKey: s.env.ANTHROPIC_API_KEY });
      const msg = await client.messages
        .stream({ model: "claude-haiku-4-5", max_tokens: 64, messages: [{ role: "user", content: "Say hello." }] })
        .finalMessage();
      assert.ok(msg.content.length > 0);
    },
    { name: "anthropic-529" },
  ));
