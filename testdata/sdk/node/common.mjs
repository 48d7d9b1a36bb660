// Shared by anthropic.mjs and openai.mjs: the request loop the retrylab
// chaos harness expects of an external client (docs/chaos.md, "External
// clients"). No dependencies beyond Node itself.
//
// RETRYLAB_REQUESTS streaming requests are made one after another, each
// through the SDK's own default retry loop; one line per request goes to
// stdout; the exit code is 0 when every request succeeded, else 1. A
// failed request prints its error's class and message to stderr (never the
// API key: the SDKs do not put it in messages, and the harness redacts every
// output file anyway). No trace is written: the SDKs do not expose how many
// attempts a request took, and retrylab then checks them from its own
// request journal (docs/sdk-clients.md).

export function requests() {
  const n = Number.parseInt(process.env.RETRYLAB_REQUESTS ?? '1', 10);
  return Number.isFinite(n) && n > 0 ? n : 1;
}

// errorLine describes err as "Class: message" (status and cause included
// when the SDK gives them), on one line.
export function errorLine(err) {
  const name = err?.constructor?.name ?? typeof err;
  let msg = err instanceof Error ? err.message : String(err);
  if (err?.status !== undefined && !msg.includes(String(err.status))) msg = `status ${err.status}: ${msg}`;
  const cause = err?.cause;
  if (cause) msg += ` (cause: ${cause?.constructor?.name ?? typeof cause}: ${cause?.message ?? cause}${cause?.code ? ' ' + cause.code : ''})`;
  return `${name}: ${msg}`.replace(/\s*\n\s*/g, ' ');
}

// run calls one(i) for i = 1..RETRYLAB_REQUESTS, one after another. one
// resolves to a short description of the answer, or throws. It exits the
// process: 0 when every request succeeded, 1 otherwise, after awaiting
// finish when given (a telemetry exporter's flush).
export async function run(label, one, finish) {
  const n = requests();
  let failed = 0;
  for (let i = 1; i <= n; i++) {
    lastAnswer = null;
    const start = Date.now();
    try {
      const what = await one(i);
      console.log(`${label} request ${i}/${n}: ok in ${Date.now() - start}ms: ${what}`);
    } catch (err) {
      failed++;
      console.log(`${label} request ${i}/${n}: failed in ${Date.now() - start}ms`);
      console.error(`${label} request ${i}/${n}: ${errorLine(err)}`);
    }
  }
  if (finish) await finish();
  process.exit(failed === 0 ? 0 : 1);
}

// IncompleteStreamError is thrown when a stream ended cleanly but without
// its final event (what an application would check); the SDKs themselves
// throw on a cut stream, so this is a safety net.
export class IncompleteStreamError extends Error {}

// timedFetch is the global fetch, timed for bench/chaosacc: each attempt
// after the first of a logical request prints "retrylab-sdk-wait Nms" on
// stderr, the time from the previous attempt's answer (its headers, or its
// failure) to this attempt, as the client itself saw it; the harness's
// accuracy is the gap it measured minus this. It returns what fetch
// returns and changes nothing the SDK does.
let lastAnswer = null;
export async function timedFetch(url, init) {
  const now = performance.now();
  if (lastAnswer !== null) console.error(`retrylab-sdk-wait ${(now - lastAnswer).toFixed(1)}ms`);
  try {
    return await fetch(url, init);
  } finally {
    lastAnswer = performance.now();
  }
}
