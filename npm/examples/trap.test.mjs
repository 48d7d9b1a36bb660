// A trap: four overloads in a row need four retries; the SDKs' defaults
// make two, so the retrylab verdict (attempts: want 5, got 3) fails each
// test although its body catches the SDK's final error. .ci/dist.sh runs
// this file and requires it to fail, with serve's words.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { withScenario } from "retrylab/test";

const fourOverloads = {
  attempts: [{ status: 529 }, { status: 529 }, { status: 529 }, { status: 529 }],
  expect: { outcome: "success", attempts: 5 },
};

test("openai survives four overloads", () =>
  withScenario({ ...fourOverloads, provider: "openai" }, async (s) => {
    const client = new OpenAI({ baseURL: s.env.OPENAI_BASE_URL, apiKey: s.env.OPENAI_API_KEY });
    await assert.rejects(client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Say hello." }] }));
  }));

test("anthropic survives four overloads", () =>
  withScenario({ ...fourOverloads, provider: "anthropic" }, async (s) => {
    const client = new Anthropic({ baseURL: s.env.ANTHROPIC_BASE_URL, apiKey: s.env.ANTHROPIC_API_KEY });
    await assert.rejects(
      client.messages.create({ model: "claude-haiku-4-5", max_tokens: 64, messages: [{ role: "user", content: "Say hello." }] }),
    );
  }));
