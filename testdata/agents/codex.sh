#!/bin/sh
# Codex CLI (@openai/codex, testdata/agents/node), unchanged, as `codex exec`
# against the mock's Responses API: a custom model provider whose base_url
# is OPENAI_BASE_URL (the built-in openai provider ignores it and tries a
# WebSocket first), its key from OPENAI_API_KEY, wire_api "responses".
# Non-interactive: no git-repo check, a read-only sandbox, no approvals,
# no analytics, no update check, no feedback uploads. The prompt and any
# extra flags come from the arguments; the model from RETRYLAB_MODEL.
here=$(cd "$(dirname "$0")" && pwd)
bin="$here/node/node_modules/@openai/codex/bin/codex.js"
if [ ! -f "$bin" ]; then
  echo "codex.sh: no Codex CLI at $bin; run: npm ci --prefix testdata/agents/node --ignore-scripts" >&2
  exit 127
fi
: "${OPENAI_BASE_URL:?codex.sh: OPENAI_BASE_URL is not set (retrylab sets it)}"
exec node "$bin" exec \
  --skip-git-repo-check --sandbox read-only --color never \
  -c model_provider=retrylab \
  -c "model_providers.retrylab={name=\"retrylab\", base_url=\"$OPENAI_BASE_URL\", env_key=\"OPENAI_API_KEY\", wire_api=\"responses\"}" \
  -c analytics.enabled=false -c check_for_update_on_startup=false -c feedback.enabled=false \
  -c approval_policy=never \
  -m "${RETRYLAB_MODEL:-gpt-5}" "$@"
