// bench/duckdb/compare.mjs: time DuckDB's read_json + SQL computing the
// headline figures of `retrylab trace analyze` on the same corpus, with
// the same number of threads (2 by default).
//
//   cd bench/duckdb && npm ci && node compare.mjs /tmp/fbench [reps] [threads]
//
// Prints the median wall time of the query and the figures it computed, so
// they can be checked against `retrylab trace analyze --format json`.
import { DuckDBInstance } from '@duckdb/node-api';

const [corpus = '../corpus', reps = '5', threads = '2'] = process.argv.slice(2);
const glob = `${corpus.replace(/'/g, "''")}/*/trace.jsonl`;
const sql = `
WITH ev AS (
  SELECT type, runId, payload FROM read_json('${glob}', format = 'newline_delimited',
    columns = {v: 'INTEGER', ts: 'VARCHAR', type: 'VARCHAR', runId: 'VARCHAR', payload: 'JSON'})
)
SELECT
  count(*) FILTER (WHERE type = 'ProviderRequestFinished') AS requests,
  avg(CASE WHEN (payload->>'retries')::BIGINT > 0 THEN 1 ELSE 0 END) FILTER (WHERE type = 'ProviderRequestFinished') AS retry_rate,
  avg(CASE WHEN (payload->>'success')::BOOLEAN THEN 0 ELSE 1 END) FILTER (WHERE type = 'ProviderRequestFinished') AS failure_rate,
  quantile_disc((payload->>'durationMs')::BIGINT, [0.5, 0.9, 0.99]) FILTER (WHERE type = 'ProviderRequestFinished') AS duration_ms,
  quantile_disc((payload->>'delayMs')::BIGINT, [0.5, 0.9, 0.99]) FILTER (WHERE type = 'RetryAttempt' AND (payload->>'willRetry')::BOOLEAN) AS delay_ms,
  count(*) FILTER (WHERE type = 'RetryAttempt') AS failed_attempts,
  count(*) FILTER (WHERE type = 'RunEscalated') AS escalations,
  count(DISTINCT runId) FILTER (WHERE type = 'RunEscalated') AS escalated_runs,
  avg((payload->>'iteration')::BIGINT) FILTER (WHERE type = 'RepairAttempted') AS avg_repair_iteration,
  count(DISTINCT runId) AS runs,
  count(*) AS events
FROM ev`;

const db = await DuckDBInstance.create(':memory:', { threads: String(threads) });
const conn = await db.connect();
const times = [];
let rows;
for (let i = 0; i < Number(reps); i++) {
  const t0 = process.hrtime.bigint();
  const reader = await conn.runAndReadAll(sql);
  rows = reader.getRowObjectsJson();
  times.push(Number(process.hrtime.bigint() - t0) / 1e9);
}
times.sort((a, b) => a - b);
const median = times[Math.floor((times.length - 1) / 2)];
console.log(JSON.stringify(rows[0]));
console.log(`duckdb (${threads} threads) median ${median.toFixed(3)}s  runs: ${times.map((t) => t.toFixed(2)).join(' ')}`);
console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(1)} MB`);
