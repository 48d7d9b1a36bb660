// The official Anthropic TypeScript SDK (@anthropic-ai/sdk, pinned in
// package.json), unchanged and with its defaults, as a retrylab external
// client: `new Anthropic()` reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY
// from the environment the harness sets, and retries with its own loop
// (2 retries, 0.5s × 2^n minus up to 25%, Retry-After / retry-after-ms,
// x-should-retry). Each request streams (messages.create with stream: true)
// and is read to its end. See docs/sdk-clients.md.
import Anthropic from '@anthropic-ai/sdk';
import { run, timedFetch, IncompleteStreamError } from './common.mjs';

const client = new Anthropic({ fetch: timedFetch });
const model = process.env.RETRYLAB_MODEL || 'claude-haiku-4-5';

await run('anthropic', async () => {
  const stream = await client.messages.create({
    model,
    max_tokens: 256,
    messages: [{ role: 'user', content: 'Say hello.' }],
    stream: true,
  });
  let text = '';
  let stopReason = null;
  let stopped = false;
  for await (const ev of stream) {
    if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    else if (ev.type === 'message_delta') stopReason = ev.delta.stop_reason ?? stopReason;
    else if (ev.type === 'message_stop') stopped = true;
  }
  if (!stopped || !stopReason) {
    throw new IncompleteStreamError(`stream ended without ${stopped ? 'stop_reason' : 'message_stop'} after ${text.length} characters`);
  }
  return `${text.length} characters, stop_reason ${stopReason}`;
});
