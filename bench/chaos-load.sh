#!/usr/bin/env bash
# Runs the scenario suite RUNS times in a row (default 50) while HOGS
# processes (default 2: every core of a 2-core machine) spin at the same
# priority, and reports each run's verdicts, what --confirm re-ran, and the
# harness's gap error per client kind (bench/chaosacc). Every scenario of
# scenarios/ is honest, so any failed or inconclusive scenario is a false
# verdict.
#
#   RUNS=50 HOGS=2 bash bench/chaos-load.sh            # busy machine
#   RUNS=3 HOGS=0 PARALLEL=1 bash bench/chaos-load.sh  # each scenario alone
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-50}
hogs=${HOGS:-2}
out=${OUT:-$(mktemp -d)}
go build -o "$out/retrylab" ./cmd/retrylab
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stop EXIT
trap 'stop; exit 130' INT TERM
for ((i = 0; i < hogs; i++)); do
  sh -c 'while :; do :; done' &
  pids+=($!)
done
args=(chaos run --format json --out "$out/runs")
[ -n "${PARALLEL:-}" ] && args+=(--parallel "$PARALLEL")
false=0
for ((i = 1; i <= runs; i++)); do
  rc=0
  "$out/retrylab" "${args[@]}" ${SCENARIOS:-scenarios} >"$out/run-$i.json" 2>"$out/run-$i.err" || rc=$?
  line=$(jq -r '"passed \(.passed) failed \(.failed) inconclusive \(.inconclusive) skipped \(.skipped) passedOnRerun \(.passedOnRerun) in \(.durationMs)ms"' "$out/run-$i.json" 2>/dev/null || echo "no summary")
  echo "run $i: exit $rc: $line"
  jq -r '.scenarios[] | select(.reruns) | "  re-ran \(.name): \([.checks[] | select(.state != "pass" and .state != "unverified") | .name + " " + .state] | join(", ")) → \([.reruns[].verdict] | join(", "))"' "$out/run-$i.json" 2>/dev/null || true
  jq -r '.scenarios[] | select(.verdict == "fail" or .verdict == "inconclusive") | "  FALSE VERDICT \(.name): \(.verdict)"' "$out/run-$i.json" 2>/dev/null || true
  [ "$rc" = 0 ] || false=$((false + 1))
done
echo "runs with a false verdict: $false of $runs (folder $out)"
go run ./bench/chaosacc "$out"/runs/*
