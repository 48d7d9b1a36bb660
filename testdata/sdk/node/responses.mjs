// The official OpenAI TypeScript SDK's Responses API, unchanged and with
// its defaults, as a retrylab external client (provider: openai-responses):
// `new OpenAI()` reads OPENAI_BASE_URL and OPENAI_API_KEY from the
// environment the harness sets and retries with its own loop (the same as
// for chat completions: 2 retries, 0.5s × 2^n minus up to 25%, Retry-After
// / retry-after-ms, x-should-retry).
//
//   node responses.mjs           responses.stream(...).finalResponse()
//   node responses.mjs create    responses.create({stream: false})
//
// A streamed request fails unless the final response is completed and its
// output_text is exactly the text of its output_text.delta events (a
// response.failed event leaves the SDK a failed response, not an error).
// Each answer's text goes to stdout as a JSON string, so a test can compare
// it with the scenario's ok.text. See docs/sdk-clients.md.
import OpenAI from 'openai';
import { run, timedFetch, IncompleteStreamError } from './common.mjs';

const mode = process.argv[2] ?? 'stream';
if (mode !== 'stream' && mode !== 'create') {
  console.error(`usage: node responses.mjs [stream|create] (got ${JSON.stringify(mode)})`);
  process.exit(2);
}
const client = new OpenAI({ fetch: timedFetch });
const model = process.env.RETRYLAB_MODEL || 'gpt-4o-mini';
const input = 'Say hello.';

await run(`responses.${mode}`, async () => {
  if (mode === 'create') {
    const r = await client.responses.create({ model, input, stream: false });
    if (r.status !== 'completed') throw new IncompleteStreamError(`response ${r.status}: ${JSON.stringify(r.error)}`);
    return `text ${JSON.stringify(r.output_text)}`;
  }
  let deltas = '';
  const stream = client.responses.stream({ model, input });
  stream.on('response.output_text.delta', (e) => { deltas += e.delta; });
  const r = await stream.finalResponse();
  if (r.status !== 'completed') {
    throw new IncompleteStreamError(`response ${r.status}: ${r.error?.code}: ${r.error?.message}`);
  }
  if (r.output_text !== deltas) {
    throw new IncompleteStreamError(`output_text (${r.output_text.length} characters) differs from the deltas (${deltas.length})`);
  }
  return `text ${JSON.stringify(r.output_text)}`;
});
