// The Vercel AI SDK (npm `ai`, with @ai-sdk/anthropic and @ai-sdk/openai),
// unchanged, as an external client of the retrylab chaos harness
// (docs/agents.md): RETRYLAB_REQUESTS calls of streamText, one after
// another, each with the SDK's default retries (maxRetries 2). The provider
// follows RETRYLAB_PROVIDER: anthropic (@ai-sdk/anthropic, the Messages
// API), openai-responses (@ai-sdk/openai's default, the Responses API) or
// openai (@ai-sdk/openai's .chat, chat completions). No trace is written:
// retrylab checks the attempts from its journal. With AI_SDK_OTEL
// set (otel or legacy) the SDK's own OpenTelemetry is on and its spans go
// to $OTEL_EXPORTER_OTLP_ENDPOINT (ai-sdk-otel.mjs).
import { streamText } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { run, IncompleteStreamError } from '../../sdk/node/common.mjs';

const provider = process.env.RETRYLAB_PROVIDER ?? 'anthropic';
const model = process.env.RETRYLAB_MODEL;
const otel = process.env.AI_SDK_OTEL;
const flushTelemetry = otel ? (await import('./ai-sdk-otel.mjs')).startTelemetry(otel) : undefined;

function languageModel() {
  switch (provider) {
    case 'anthropic':
      return createAnthropic({ baseURL: `${process.env.ANTHROPIC_BASE_URL}/v1`, apiKey: process.env.ANTHROPIC_API_KEY })(model);
    case 'openai-responses':
      return createOpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY })(model);
    case 'openai':
      return createOpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY }).chat(model);
    default:
      throw new Error(`ai-sdk.mjs: unknown RETRYLAB_PROVIDER ${provider}`);
  }
}

await run(`ai-sdk ${provider}`, async () => {
  let streamError = null;
  const result = streamText({
    model: languageModel(),
    prompt: 'Say hi',
    maxOutputTokens: 256,
    onError: ({ error }) => { streamError = error; },
  });
  let text = '';
  for await (const delta of result.textStream) text += delta;
  if (streamError) throw streamError;
  const finish = await result.finishReason;
  if (finish !== 'stop') throw new IncompleteStreamError(`finish reason ${finish} after ${text.length} chars`);
  return `${text.length} chars: ${text}`;
}, flushTelemetry);
