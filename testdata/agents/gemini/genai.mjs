// Google's Gen AI SDK for JavaScript (@google/genai), unchanged and with
// its defaults, as a retrylab external client (provider: gemini). The base
// URL goes in through httpOptions.baseUrl (GOOGLE_GEMINI_BASE_URL, which
// the harness sets) and the key is GEMINI_API_KEY. By default the SDK makes
// one attempt and retries nothing (no httpOptions.retryOptions); an error
// frame in the stream is thrown as an ApiError with its code.
//
//   node genai.mjs           models.generateContentStream(...)
//   node genai.mjs create    models.generateContent(...)
//
// A streamed request fails unless its last chunk has a finishReason. Each
// answer's text goes to stdout as a JSON string, so a test can compare it
// with the scenario's ok.text. See docs/sdk-clients.md.
import { GoogleGenAI } from '@google/genai';
import { run, IncompleteStreamError } from '../../sdk/node/common.mjs';

const mode = process.argv[2] ?? 'stream';
if (mode !== 'stream' && mode !== 'create') {
  console.error(`usage: node genai.mjs [stream|create] (got ${JSON.stringify(mode)})`);
  process.exit(2);
}
const ai = new GoogleGenAI({
  apiKey: process.env.GEMINI_API_KEY,
  httpOptions: { baseUrl: process.env.GOOGLE_GEMINI_BASE_URL },
});
const model = process.env.RETRYLAB_MODEL || 'gemini-2.5-flash';
const contents = 'Say hello.';

await run(`genai.${mode}`, async () => {
  if (mode === 'create') {
    const r = await ai.models.generateContent({ model, contents });
    return `text ${JSON.stringify(r.text)}`;
  }
  let text = '';
  let finish;
  for await (const chunk of await ai.models.generateContentStream({ model, contents })) {
    text += chunk.text ?? '';
    finish = chunk.candidates?.[0]?.finishReason ?? finish;
  }
  if (!finish) throw new IncompleteStreamError(`stream ended without a finishReason after ${text.length} characters`);
  return `text ${JSON.stringify(text)}`;
});
