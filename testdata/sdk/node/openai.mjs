// The official OpenAI TypeScript SDK, unchanged and with its defaults, as a
// retrylab external client: `new OpenAI()` reads OPENAI_BASE_URL and
// OPENAI_API_KEY from the environment the harness sets, and retries with
// its own loop (2 retries, 0.5s × 2^n minus up to 25%, Retry-After /
// retry-after-ms, x-should-retry). Each request streams
// (chat.completions.create with stream: true) and is read to its end.
//
//   node openai.mjs            the `openai` package (6.x, package.json)
//   node openai.mjs openai7    the `openai7` alias (npm:openai@7.x)
//
// See docs/sdk-clients.md.
import { run, timedFetch, IncompleteStreamError } from './common.mjs';

const pkg = process.argv[2] ?? 'openai';
if (pkg !== 'openai' && pkg !== 'openai7') {
  console.error(`usage: node openai.mjs [openai|openai7] (got ${JSON.stringify(pkg)})`);
  process.exit(2);
}
const { default: OpenAI } = await import(pkg);
const client = new OpenAI({ fetch: timedFetch });
const model = process.env.RETRYLAB_MODEL || 'gpt-4o-mini';

await run(pkg, async () => {
  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'Say hello.' }],
    stream: true,
  });
  let text = '';
  let finish = null;
  for await (const chunk of stream) {
    for (const c of chunk.choices ?? []) {
      text += c.delta?.content ?? '';
      finish = c.finish_reason ?? finish;
    }
  }
  if (!finish) throw new IncompleteStreamError(`stream ended without finish_reason after ${text.length} characters`);
  return `${text.length} characters, finish_reason ${finish}`;
});
