#!/usr/bin/env bash
# The chaos suite, twice: on embedded Toxiproxy, then on a real
# toxiproxy-server (pinned v2.12.0, built here) started on loopback.
# Each run writes its run folder under runs/ci-embedded and runs/ci-server
# (junit.xml inside each) for the CI system to collect. --fail-on-skip: a
# scenario skipped for a missing client (the SDK clients of scenarios/sdk,
# and the agents of scenarios/agents, which .ci/run installs) fails the run
# instead of passing unnoticed.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$(go env GOPATH)/bin:$PATH"

echo "== chaos run (embedded Toxiproxy)"
go run ./cmd/retrylab chaos run --fail-on-skip --out runs/ci-embedded --format table scenarios/

server="${TOXIPROXY_SERVER_BIN:-}"
if [ -z "$server" ]; then
  echo "== build toxiproxy-server v2.12.0"
  go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0
  server="$(go env GOPATH)/bin/server"
fi

# A free loopback port: bind port 0, read it, release it.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' 2>/dev/null ||
  echo $((20000 + RANDOM % 20000)))
log=$(mktemp)
"$server" -host 127.0.0.1 -port "$port" >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$log"' EXIT INT TERM

url="http://127.0.0.1:$port"
for i in $(seq 1 100); do # at most ~10s
  if curl -fsS "$url/version" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then echo "toxiproxy-server exited:"; cat "$log"; exit 1; fi
  if [ "$i" = 100 ]; then echo "toxiproxy-server did not answer $url/version within 10s:"; cat "$log"; exit 1; fi
  sleep 0.1
done
echo "== chaos run (toxiproxy-server $(curl -fsS "$url/version") at $url)"
# --proxy always: every scenario through the real server (the first run
# took the default path, straight to the mock where no fault needs a proxy).
go run ./cmd/retrylab chaos run --fail-on-skip --out runs/ci-server --toxiproxy "$url" --proxy always --format table scenarios/
