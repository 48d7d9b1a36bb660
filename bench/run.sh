#!/usr/bin/env bash
# bench/run.sh: time seed 003's three jq pipelines against `retrylab trace
# analyze` on the same ~1M-event corpus, and measure analyze's peak RSS.
#
#   bench/run.sh                 # corpus in bench/corpus (generated once)
#   EVENTS=2000000 REPS=5 bench/run.sh
#
# Prints the median wall time of each, the ratio, and peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."

EVENTS=${EVENTS:-1000000}
RUNS=${RUNS:-1000}
REPS=${REPS:-3}
CORPUS=${CORPUS:-bench/corpus}
BIN=$(mktemp -d)
trap 'rm -rf "$BIN"' EXIT

command -v jq >/dev/null || { echo "error: jq is not installed" >&2; echo "hint: apt-get install jq (or brew install jq)" >&2; exit 2; }
go build -o "$BIN/retrylab" ./cmd/retrylab
go build -o "$BIN/rss" ./bench/rss
if [ ! -d "$CORPUS" ]; then
  go run ./bench/gen -out "$CORPUS" -events "$EVENTS" -runs "$RUNS"
fi
echo "corpus: $CORPUS, $(cat "$CORPUS"/*/trace.jsonl | wc -l) events, $(du -sh "$CORPUS" | cut -f1)"
echo "machine: $(nproc) cores, $(jq --version), $(go version | cut -d' ' -f3)"

now() { date +%s.%N; }
# median of the numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# time_it NAME CMD: runs CMD (a shell string) REPS times, prints the median seconds.
time_it() {
  local name=$1 cmd=$2 times=()
  for _ in $(seq "$REPS"); do
    local t0; t0=$(now)
    bash -c "$cmd" >/dev/null 2>&1 || true
    times+=("$(echo "$(now) - $t0" | bc -l)")
  done
  local m; m=$(printf '%s\n' "${times[@]}" | median)
  printf '%-28s median %8.3fs  (runs: %s)\n' "$name" "$m" "$(printf '%.2f ' "${times[@]}")" >&2
  echo "$m"
}

C="$CORPUS"
j1=$(time_it "jq: retries per request" "cat $C/*/trace.jsonl | jq 'select(.type == \"ProviderRequestFinished\") | .payload.retries' | sort | uniq -c")
j2=$(time_it "jq: runs with escalations" "cat $C/*/trace.jsonl | jq 'select(.type == \"RunEscalated\")'")
j3=$(time_it "jq: L2 repair iterations" "cat $C/*/trace.jsonl | jq 'select(.type == \"RepairAttempted\") | .payload.iteration'")
# A failed analysis would time as fast as nothing at all: check it works
# (exit 0, or 1 when an alert fires) and reads every event before timing it.
set +e
"$BIN/retrylab" trace analyze "$C" --format json >"$BIN/analysis.json" 2>"$BIN/analysis.err"
rc=$?
set -e
if [ "$rc" -gt 1 ] || ! grep -q '"schema": "retrylab.analysis/v1"' "$BIN/analysis.json"; then
  echo "error: retrylab trace analyze failed (exit $rc):" >&2; cat "$BIN/analysis.err" >&2; exit 1
fi
echo "analyze read $(jq .inputs.events "$BIN/analysis.json") events" >&2
REPS=$((REPS + 2))
ra=$(time_it "retrylab trace analyze" "$BIN/retrylab trace analyze $C --format json")

jq_total=$(echo "$j1 + $j2 + $j3" | bc -l)
echo >&2
printf 'jq pipelines together: %.3fs   retrylab trace analyze: %.3fs   speed-up: %.1fx (target >= 50x)\n' \
  "$jq_total" "$ra" "$(echo "$jq_total / $ra" | bc -l)"

# Exit code 1 (an alert fired) is fine here: the corpus is meant to trip alerts.
if [ -x /usr/bin/time ] && /usr/bin/time -v true >/dev/null 2>&1; then
  kb=$( /usr/bin/time -v "$BIN/retrylab" trace analyze "$C" --format json 2>&1 >/dev/null \
        | awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}' ) || true
else
  kb=$( "$BIN/rss" -- "$BIN/retrylab" trace analyze "$C" --format json 2>&1 >/dev/null \
        | sed -n 's/.*max_rss_kb=\([0-9]*\).*/\1/p' ) || true
fi
printf 'peak RSS of retrylab trace analyze: %.1f MB (target < 64 MB)\n' "$(echo "$kb / 1024" | bc -l)"
