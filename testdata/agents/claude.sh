#!/bin/sh
# Claude Code (@anthropic-ai/claude-code, testdata/agents/node), unchanged:
# the native binary of its platform package. npm ci --ignore-scripts leaves
# the package's bin/claude.exe a placeholder (its postinstall copies the
# binary there), so this runs the platform package's binary itself.
here=$(cd "$(dirname "$0")" && pwd)
os=$(uname -s | tr '[:upper:]' '[:lower:]')
case "$(uname -m)" in
  x86_64|amd64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) arch=$(uname -m) ;;
esac
bin="$here/node/node_modules/@anthropic-ai/claude-code-$os-$arch/claude"
if [ ! -x "$bin" ]; then
  echo "claude.sh: no Claude Code binary at $bin; run: npm ci --prefix testdata/agents/node --ignore-scripts" >&2
  exit 127
fi
exec "$bin" "$@"
