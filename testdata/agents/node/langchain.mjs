// LangChain.js (@langchain/anthropic's ChatAnthropic), unchanged, as an
// external client of the retrylab chaos harness (docs/agents.md):
// RETRYLAB_REQUESTS calls of .stream(), one after another, with LangChain's
// default retries (AsyncCaller, 6 retries; the Anthropic SDK under it is
// built with maxRetries 0). No trace is written: retrylab checks the
// attempts from its journal.
import { ChatAnthropic } from '@langchain/anthropic';
import { run } from '../../sdk/node/common.mjs';

const chat = new ChatAnthropic({
  model: process.env.RETRYLAB_MODEL,
  anthropicApiUrl: process.env.ANTHROPIC_BASE_URL,
  apiKey: process.env.ANTHROPIC_API_KEY,
  maxTokens: 256,
});

await run('langchain anthropic', async () => {
  let text = '';
  for await (const chunk of await chat.stream('Say hi')) {
    text += typeof chunk.content === 'string' ? chunk.content : chunk.content.map((p) => p.text ?? '').join('');
  }
  return `${text.length} chars: ${text}`;
});
