#!/usr/bin/env bash
# aider (testdata/python/aider, `bash testdata/python/install.sh aider`),
# unchanged, headless, as a retrylab external client:
#
#   testdata/python/aider.sh --model openai/gpt-4o-mini --message "Say hello."
#
# It runs in its HOME (the harness makes one in the run folder), and the chat
# and input histories it writes are named there, so they stay in the run
# folder. Its
# model reaches the mock through OPENAI_API_BASE / ANTHROPIC_API_BASE, set
# from the harness's base URL variables. No git, no update check, no
# analytics, no repo map, no browser, no prompts (--yes-always); LiteLLM
# reads its bundled model map instead of fetching one. Arguments are passed
# on to aider.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
aider="$here/aider/.venv/bin/aider"
if [ ! -x "$aider" ]; then
  echo "aider is not installed: run bash testdata/python/install.sh aider" >&2
  exit 127
fi
: "${HOME:?the harness sets HOME}"
cd "$HOME"
[ -n "${OPENAI_BASE_URL:-}" ] && export OPENAI_API_BASE="$OPENAI_BASE_URL"
[ -n "${ANTHROPIC_BASE_URL:-}" ] && export ANTHROPIC_API_BASE="$ANTHROPIC_BASE_URL"
export LITELLM_LOCAL_MODEL_COST_MAP=True
# Its histories and its .env are files of its HOME: by default aider puts
# them at the root of any git repository above the working directory
# (GitPython searches upwards even with --no-git), which for a run folder
# inside a checkout is the checkout itself.
exec "$aider" --yes-always --no-git --no-gitignore --no-check-update --no-analytics \
  --chat-history-file "$HOME/.aider.chat.history.md" --input-history-file "$HOME/.aider.input.history" \
  --env-file "$HOME/.env" \
  --no-show-model-warnings --no-show-release-notes --no-pretty --no-fancy-input \
  --no-detect-urls --map-tokens 0 "$@"
