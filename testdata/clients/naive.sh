#!/usr/bin/env bash
# A naive external agent for the findings scenarios (scenarios/findings/),
# bash only (HTTP/1.0 over /dev/tcp, like agent.sh), no trace. It streams
# one Anthropic message from ANTHROPIC_BASE_URL and prints the answer's
# text deltas as it reads them, with no newline between attempts. It
# retries 429, 5xx and an in-stream `event: error` at once, up to 3
# attempts, and takes any other 200 as a whole answer: a stream cut
# without message_stop, or one with an event that is not JSON, is a
# success to it. It never times out a read.
#
# NAIVE_WHOLE=1 makes it careful: it prints an answer only once its stream
# ended with message_stop, retries any other 200 after 1s (times
# RETRYLAB_TIME_SCALE), and reads with a 1s idle timeout.
set -u

base=${ANTHROPIC_BASE_URL%/}
key=${ANTHROPIC_API_KEY:-}
scale=${RETRYLAB_TIME_SCALE:-1}
whole=${NAIVE_WHOLE:-}
hostport=${base#http://}
hostport=${hostport%%/*}
host=${hostport%:*}
port=${hostport##*:}
readopt=()
[ -n "$whole" ] && readopt=(-t 1)

# text prints the text deltas of an Anthropic stream.
text() {
	sed -n 's/.*"type":"text_delta","text":"\(.*\)"}}[[:space:]]*$/\1/p' | tr -d '\n'
}

for n in 1 2 3; do
	body='{"model":"claude-haiku-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"Say hello."}]}'
	exec 3<>"/dev/tcp/$host/$port" || exit 1
	printf 'POST /v1/messages HTTP/1.0\r\nHost: %s\r\nContent-Type: application/json\r\nx-api-key: %s\r\nanthropic-version: 2023-06-01\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
		"$hostport" "$key" "${#body}" "$body" >&3 2>/dev/null
	status=0 response=""
	if IFS= read -r "${readopt[@]}" line <&3; then
		status=$(echo "$line" | cut -d' ' -f2)
		while IFS= read -r "${readopt[@]}" line <&3 || [ -n "$line" ]; do
			response+="$line"$'\n'
		done
	fi
	exec 3<&-
	retry=false
	case "$status" in
	200)
		if [[ $response == *"event: error"* ]]; then
			retry=true
		elif [ -n "$whole" ] && [[ $response != *"message_stop"* ]]; then
			retry=true
		fi
		;;
	429 | 5??) retry=true ;;
	*) echo "[naive] attempt $n: HTTP $status" >&2; exit 1 ;;
	esac
	if [ -z "$whole" ] || [ "$retry" = false ]; then
		printf '%s' "$response" | text
	fi
	if [ "$retry" = false ]; then
		echo
		exit 0
	fi
	echo "[naive] attempt $n: HTTP $status, retrying" >&2
	[ -n "$whole" ] && sleep "$(awk -v s="$scale" 'BEGIN { printf "%.3f", s }')"
done
exit 1
