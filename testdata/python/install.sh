#!/usr/bin/env bash
# Installs the Python clients of testdata/python (docs/sdk-clients.md) into
# virtual environments of their own, from lock files with hashes:
#
#   bash testdata/python/install.sh [SET...]    SET: sdk, litellm, agents, aider, llmock
#                                               (default: sdk litellm agents aider, what CI runs;
#                                               llmock is bench/llmock's, docs/llmock.md)
#
# Each SET is testdata/python/SET/requirements.txt (compiled from
# requirements.in with pip-compile --generate-hashes) installed with
# pip install --require-hashes --no-deps into testdata/python/SET/.venv.
# Nothing is installed globally. A venv whose stamp matches its lock file is
# kept, so a second run costs nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="${PYTHON:-python3}"
if ! command -v "$py" >/dev/null 2>&1; then
  echo "python3 is needed for the Python clients (testdata/python): install Python 3.10 or later" >&2
  exit 1
fi
if ! "$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'; then
  echo "Python 3.10 or later is needed for the Python clients; $py is $("$py" --version 2>&1)" >&2
  exit 1
fi
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(sdk litellm agents aider)
for set in "${sets[@]}"; do
  lock="$here/$set/requirements.txt"
  if [ ! -f "$lock" ]; then
    echo "no client set $set (want one of: $(cd "$here" && ls -d */ | tr -d / | tr '\n' ' '))" >&2
    exit 2
  fi
  venv="$here/$set/.venv"
  sum=$(sha256sum "$lock" | cut -d' ' -f1)
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.retrylab-lock" 2>/dev/null)" = "$sum" ]; then
    echo "testdata/python/$set: up to date"
    continue
  fi
  rm -rf "$venv"
  "$py" -m venv "$venv"
  # --no-deps: the lock file holds the whole tree, each file pinned by hash.
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input \
    --require-hashes --no-deps --only-binary=:all: -r "$lock"
  "$venv/bin/pip" check >/dev/null
  echo "$sum" >"$venv/.retrylab-lock"
  echo "testdata/python/$set: installed $(grep -c '^[a-z]' "$lock") packages"
done
