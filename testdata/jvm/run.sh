#!/usr/bin/env bash
# Starts one JVM SDK client built by build.sh: run.sh anthropic | openai.
# The client reads everything else from the environment (RETRYLAB_REQUESTS,
# RETRYLAB_MODEL, and the SDK's own ANTHROPIC_* / OPENAI_* variables).
# -XX:TieredStopAtLevel=1 and -Xshare:auto shorten the JVM's start-up; they
# change nothing the SDK does.
set -euo pipefail
dir="$(cd "$(dirname "$0")" && pwd)"
mod="${1:-}"
case "$mod" in
  anthropic) main=retrylab.jvm.AnthropicClient ;;
  openai) main=retrylab.jvm.OpenAIClient ;;
  *) echo "usage: run.sh anthropic|openai" >&2; exit 2 ;;
esac
if [ ! -s "$dir/$mod/target/classpath.txt" ]; then
  echo "run.sh: $dir/$mod/target/classpath.txt is missing: run testdata/jvm/build.sh" >&2
  exit 2
fi
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto \
  -cp "$dir/$mod/target/classes:$(cat "$dir/$mod/target/classpath.txt")" "$main"
