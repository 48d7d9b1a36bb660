#!/usr/bin/env bash
# Runs the same unchanged SDK clients against LLMock 0.2.2 and against
# retrylab's chaos run, fault by fault, and prints a Markdown table of what
# each tool saw and judged (docs/llmock.md). Loopback only.
#
#   bash bench/llmock/compare.sh [--only CASE,...] [--clients C,...] [--out DIR]
#
# Installs what it needs first (testdata/python/install.sh llmock sdk; the
# Node client when testdata/sdk/node/node_modules is there, else it is
# skipped: npm ci --prefix testdata/sdk/node --ignore-scripts) and builds
# retrylab into a temporary folder, removed at the end.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
bash testdata/python/install.sh llmock sdk >&2
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/retrylab" ./cmd/retrylab
RETRYLAB="$tmp/retrylab" testdata/python/llmock/.venv/bin/python bench/llmock/compare.py "$@"
