#!/usr/bin/env bash
# bench/mock-vs-aimock.sh: retrylab's mock (`chaos serve`, at the base URL
# it prints: the path a client of this scenario takes, direct to the mock
# since no fault of it needs Toxiproxy) against aimock 1.43.0 (npm
# @copilotkit/aimock, pinned in bench/aimock/package-lock.json), the same
# chat-completions stream to the same load generator (bench/streamload), in
# alternating runs at 1, 50 and 500 concurrent clients, with a fresh
# connection per stream and with keep-alive clients. Prints every run, then
# the medians and the ratios retrylab ÷ aimock. Also runs a second `chaos
# serve --proxy always` (every byte through the embedded Toxiproxy, the
# path of every client before, and of a scenario with drop, reset or
# toxics) unless PROXY=0.
#
#   bash bench/mock-vs-aimock.sh                  # 3 rounds of 5 s runs
#   REPS=5 DUR=10s CONC="50 500" bash bench/mock-vs-aimock.sh
#   SERVE_ARGS="--journal /tmp/j/server.jsonl" bash bench/mock-vs-aimock.sh
#
# Both answer the same 1,265-character text (internal/wire.DefaultText) as
# 41 SSE events (role, 38 pieces — aimock's --chunk-size 34 gives 38 —,
# finish, [DONE]); the script fails unless both streams have as many events.
# Needs node ≥ 20.15 and npm. Not in CI: the figures are in
# docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
reps=${REPS:-3}
dur=${DUR:-5s}
conc=${CONC:-1 50 500}
modes=${MODES:-fresh keepalive}
out=${OUT:-$(mktemp -d)}
port=${AIMOCK_PORT:-4010}

command -v node >/dev/null || { echo "error: node is not installed (aimock needs node ≥ 20.15)" >&2; exit 2; }
go build -o "$out/retrylab" ./cmd/retrylab
go build -o "$out/streamload" ./bench/streamload
if [ ! -x bench/aimock/node_modules/.bin/aimock ]; then
  (cd bench/aimock && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
fi

pids=()
stop() { for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap stop EXIT
trap 'stop; exit 130' INT TERM

node bench/aimock/node_modules/@copilotkit/aimock/dist/cli.js -p "$port" -f bench/aimock/fixtures.json \
  --chunk-size 34 --log-level silent >"$out/aimock.log" 2>&1 &
aimock_pid=$!
pids+=("$aimock_pid")
# chaos serve runs in $out, so that what it writes by default lands there.
(cd "$out" && exec "$out/retrylab" chaos serve --scenario "$root/bench/aimock/ok.yaml" ${SERVE_ARGS:-} >"$out/serve.out" 2>"$out/serve.err") &
serve_pid=$!
pids+=("$serve_pid")
proxy_pid=""
if [ "${PROXY:-1}" != 0 ]; then
  mkdir -p "$out/proxy"
  (cd "$out/proxy" && exec "$out/retrylab" chaos serve --proxy always --scenario "$root/bench/aimock/ok.yaml" ${SERVE_ARGS:-} >"$out/proxy/serve.out" 2>"$out/proxy/serve.err") &
  proxy_pid=$!
  pids+=("$proxy_pid")
fi
for _ in $(seq 100); do
  grep -q '^OPENAI_BASE_URL=' "$out/serve.out" 2>/dev/null && grep -q 'path: ' "$out/serve.err" && curl -s -o /dev/null "http://127.0.0.1:$port/" &&
    { [ -z "$proxy_pid" ] || grep -q '^OPENAI_BASE_URL=' "$out/proxy/serve.out" 2>/dev/null; } && break
  sleep 0.1
done
base=$(sed -n 's/^OPENAI_BASE_URL=//p' "$out/serve.out")
[ -n "$base" ] || { echo "error: chaos serve did not start:" >&2; cat "$out/serve.err" >&2; exit 1; }
path=$(sed -n 's/.*path: \([a-z]*\)).*/\1/p' "$out/serve.err" | head -1)
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), node $(node --version), $(go version | cut -d' ' -f3)"
echo "retrylab: $base (path: $path), pid $serve_pid; aimock: http://127.0.0.1:$port/v1, pid $aimock_pid; runs of $dur after 1 s of warm-up"

targets=("retrylab $base/chat/completions $serve_pid" "aimock http://127.0.0.1:$port/v1/chat/completions $aimock_pid")
if [ -n "$proxy_pid" ]; then
  pbase=$(sed -n 's/^OPENAI_BASE_URL=//p' "$out/proxy/serve.out")
  [ -n "$pbase" ] || { echo "error: chaos serve --proxy always did not start:" >&2; cat "$out/proxy/serve.err" >&2; exit 1; }
  echo "proxy: chaos serve --proxy always at $pbase, pid $proxy_pid"
  targets+=("proxy $pbase/chat/completions $proxy_pid")
fi
: >"$out/runs.txt"
for ((r = 1; r <= reps; r++)); do
  for c in $conc; do
    for m in $modes; do
      ka=""; [ "$m" = keepalive ] && ka=-keepalive
      # Alternate which server goes first from one round to the next.
      order=("${targets[@]}")
      if ((r % 2 == 0)); then order=("${targets[1]}" "${targets[0]}" "${targets[@]:2}"); fi
      for t in "${order[@]}"; do
        read -r name url pid <<<"$t"
        line=$("$out/streamload" -label "$name" -url "$url" -c "$c" -d "$dur" $ka -pid "$pid") || {
          echo "error: $name c=$c $m: streams failed" >&2; echo "$line" >&2; exit 1; }
        echo "round=$r $line" | tee -a "$out/runs.txt"
      done
    done
  done
done

awk '
function v(k,  i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
function median(s,  a, n, i, j, t) { n = split(s, a, " ")
  for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
{ k = $2 " " v("mode") " " v("c"); sps[k] = sps[k] " " v("streams_per_s"); p99[k] = p99[k] " " v("ttfb_p99_ms")
  cpu[k] = cpu[k] " " v("cpu_ms_per_stream"); ev[$2] = v("events"); keys[v("mode") " " v("c")] = 1 }
END {
  if (ev["retrylab"] != ev["aimock"]) { printf "error: retrylab streams %s events, aimock %s\n", ev["retrylab"], ev["aimock"]; exit 1 }
  printf "\nmedians of %d round(s); both streams %s SSE events\n", '"$reps"', ev["retrylab"]
  printf "%-10s %5s | %9s %9s %6s | %8s %8s | %8s %8s %6s | %9s %6s\n", "mode", "c", "retrylab", "aimock", "ratio", "p99 ms", "aimock", "cpu ms", "aimock", "ratio", "proxy", "ratio"
  n = split("fresh keepalive", ms, " ")
  for (i = 1; i <= n; i++) for (c = 1; c <= 100000; c++) {
    if (!((ms[i] " " c) in keys)) continue
    r = "retrylab " ms[i] " " c; a = "aimock " ms[i] " " c; d = "proxy " ms[i] " " c
    rs = median(sps[r]); as = median(sps[a]); rc = median(cpu[r]); ac = median(cpu[a])
    ds = (d in sps) ? median(sps[d]) : 0
    printf "%-10s %5d | %9.0f %9.0f %5.2fx | %8.1f %8.1f | %8.3f %8.3f %5.2fx | %9.0f %5.2fx\n", ms[i], c, rs, as, rs / as,
      median(p99[r]), median(p99[a]), rc, ac, (ac > 0 ? rc / ac : 0), ds, (ds > 0 ? ds / as : 0)
  }
}' "$out/runs.txt"
stop
pids=()
jbytes=$(find "$out" -name '*.jsonl' -printf '%s\n' | awk '{s += $1} END {print s + 0}')
served=$(sed -n 's/^server saw \([0-9]*\) attempt.*/\1/p' "$out/serve.out")
# No verdict (serve was stopped before it printed it): count the journal's
# MockResponse events, one per attempt.
[ -n "$served" ] || served=$(find "$out" -name '*.jsonl' -exec grep -c '"MockResponse"' {} + 2>/dev/null | awk -F: '{s += $NF} END {print s + 0}')
echo
echo "chaos serve: ${served:-?} attempts; journal on disk $jbytes B ($(awk -v b="$jbytes" -v n="${served:-0}" 'BEGIN {printf "%.0f", n ? b / n : 0}') B per attempt);" \
  "stderr $(wc -l <"$out/serve.err") lines, verdict $(wc -l <"$out/serve.out") lines (folder $out)"
