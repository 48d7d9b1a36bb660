#!/bin/sh
# A shell client for `retrylab chaos run`: curl and POSIX sh only, no trace.
#
# It streams one Anthropic message from ANTHROPIC_BASE_URL, retries HTTP 429
# and 5xx, network errors and streams that end without message_stop after
# 1s, 2s, 4s (times RETRYLAB_TIME_SCALE), gives up on other statuses, and
# exits 0 when a stream was complete, 1 otherwise. The harness checks its
# waits from the server journal alone. It never prints the key.
set -u
base=${ANTHROPIC_BASE_URL%/}
scale=${RETRYLAB_TIME_SCALE:-1}
body=$(printf '{"model":"%s","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"Say hello."}]}' "${RETRYLAB_MODEL:-claude-haiku-4-5}")
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for wait in 1 2 4 none; do
	status=$(curl -sS -N --max-time 30 -o "$out" -w '%{http_code}' -X POST "$base/v1/messages" \
		-H "x-api-key: ${ANTHROPIC_API_KEY:-}" -H 'anthropic-version: 2023-06-01' \
		-H 'content-type: application/json' -d "$body")
	rc=$?
	if [ "$rc" -eq 0 ] && [ "$status" = 200 ] && grep -q '^event: message_stop' "$out"; then
		echo "attempt ok: $(grep -c '^event: content_block_delta' "$out") deltas"
		exit 0
	fi
	case "$status" in
	429 | 5??) echo "attempt failed: HTTP $status" ;;
	200 | 000) echo "attempt failed: curl exit $rc, HTTP $status (network error or broken stream)" ;;
	*)
		echo "giving up: HTTP $status is not retryable: $(cat "$out")"
		exit 1
		;;
	esac
	[ "$wait" = none ] && break
	sleep "$(awk "BEGIN{print $wait * $scale}")"
done
echo "giving up after 4 attempts"
exit 1
