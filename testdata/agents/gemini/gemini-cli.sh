#!/bin/sh
# Gemini CLI (@google/gemini-cli, testdata/agents/gemini), unchanged, as a
# retrylab external client (provider: gemini): one prompt, non-interactive
# (gemini -p), against GOOGLE_GEMINI_BASE_URL with GEMINI_API_KEY, both set
# by the harness. Arguments are passed on to gemini (e.g. -m MODEL).
#
# Gemini CLI reads its auth type from $HOME/.gemini/settings.json
# (security.auth.selectedType: gemini-api-key), so it gets a HOME of its own
# in the scenario's run folder, never the user's: the harness's own empty
# HOME when it gives one there, else run-folder/home. Its settings switch
# off auto-update, update notices, usage statistics and telemetry, and
# GEMINI_CLI_TRUST_WORKSPACE trusts the working folder without asking.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rundir=$(dirname "${RETRYLAB_TRACE:?RETRYLAB_TRACE is set by retrylab chaos run}")
case "${HOME:-}" in
"$rundir"/*) ;;
*) HOME="$rundir/home" ;;
esac
export HOME
mkdir -p "$HOME/.gemini"
cat >"$HOME/.gemini/settings.json" <<'JSON'
{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
JSON
export GEMINI_CLI_TRUST_WORKSPACE=true GEMINI_TELEMETRY_ENABLED=false GEMINI_CLI_NO_RELAUNCH=true NO_COLOR=1
exec node "$here/node_modules/@google/gemini-cli/bundle/gemini.js" -p "${RETRYLAB_PROMPT:-Say hello.}" "$@"
