#!/usr/bin/env bash
# bench/fleet.sh: run a fleet of 1,000 built-in clients (bench/fleet/fleet-1000.yaml,
# time-scaled) in one `retrylab chaos run` and print its wall time, CPU time and
# peak RSS (GNU time), and the fleet's figures.
#
#   bench/fleet.sh                       # bench/fleet/fleet-1000.yaml
#   bench/fleet.sh path/to/fleet.yaml
set -euo pipefail
cd "$(dirname "$0")/.."

SCENARIO=${1:-bench/fleet/fleet-1000.yaml}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[ -x /usr/bin/time ] || { echo "error: GNU time (/usr/bin/time) is not installed" >&2; echo "hint: apt-get install time" >&2; exit 2; }
go build -o "$TMP/retrylab" ./cmd/retrylab
/usr/bin/time -v "$TMP/retrylab" chaos run --seed 1 --out "$TMP/runs" "$SCENARIO" >"$TMP/out" 2>"$TMP/err" || true
grep -E "passed|failed" "$TMP/out" | tail -1
grep -A1 "^Fleets" "$TMP/out" | tail -1
grep -E "Elapsed \(wall|User time|System time|Maximum resident" "$TMP/err" | sed 's/^\t*/  /'
echo "  load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
