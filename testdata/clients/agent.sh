#!/usr/bin/env bash
# A tiny external agent for `retrylab chaos run` that needs nothing but bash:
# it speaks HTTP/1.0 (no chunked encoding: the body ends at EOF) over bash's /dev/tcp, so a machine with only Go (and the
# shell every Linux has) can run the whole suite.
#
# It sends RETRYLAB_REQUESTS streaming requests to the Anthropic Messages API
# at ANTHROPIC_BASE_URL (http://host:port) with ANTHROPIC_API_KEY, retries
# 429, 5xx, refused/reset connections and streams that end without
# message_stop with 1s, 2s, 4s, 8s (times RETRYLAB_TIME_SCALE, recorded in
# policy time), writes one RetryAttempt per failed attempt and one
# ProviderRequestFinished per request to RETRYLAB_TRACE (trace format v1),
# and exits 0 when every request succeeded, 1 otherwise. It never prints the
# key.
set -u

base=${ANTHROPIC_BASE_URL%/}
key=${ANTHROPIC_API_KEY:-}
model=${RETRYLAB_MODEL:-claude-haiku-4-5}
requests=${RETRYLAB_REQUESTS:-1}
scale=${RETRYLAB_TIME_SCALE:-1}
tracefile=${RETRYLAB_TRACE:-}
backoff=(1 2 4 8)

hostport=${base#http://}
hostport=${hostport%%/*}
host=${hostport%:*}
port=${hostport##*:}

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

emit() { # emit TYPE PAYLOAD-JSON: one line, one write, O_APPEND
	[ -n "$tracefile" ] || return 0
	printf '{"v":1,"type":"%s","payload":%s}\n' "$1" "$2" >>"$tracefile"
}

# attempt sets ft (failure type, empty on success) and status.
attempt() {
	ft="" status=0
	local body
	body=$(printf '{"model":"%s","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"Say hello."}]}' "$model")
	if ! exec 3<>"/dev/tcp/$host/$port"; then
		ft=connection_error
		return
	fi
	printf 'POST /v1/messages HTTP/1.0\r\nHost: %s\r\nContent-Type: application/json\r\nx-api-key: %s\r\nanthropic-version: 2023-06-01\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
		"$hostport" "$key" "${#body}" "$body" >&3 2>/dev/null
	local line response=""
	if ! IFS= read -r -t 10 line <&3; then
		exec 3<&-
		ft=connection_error
		return
	fi
	status=$(echo "$line" | cut -d' ' -f2)
	while IFS= read -r -t 10 line <&3 || [ -n "$line" ]; do
		response+="$line"$'\n'
	done
	exec 3<&-
	case "$status" in
	200) ;;
	429) ft=rate_limit; return ;;
	502) ft=provider_unavailable; return ;;
	503 | 529) ft=overloaded; return ;;
	5??) ft=server_error; return ;;
	*) ft=invalid_request; return ;;
	esac
	if [[ $response == *"event: error"* ]]; then
		ft=overloaded
	elif [[ $response != *"message_stop"* ]]; then
		ft=stream_interrupted
	fi
}

request() {
	local start n=0 delay retry
	start=$(now_ms)
	while :; do
		n=$((n + 1))
		attempt
		if [ -z "$ft" ]; then
			emit ProviderRequestFinished "$(printf '{"provider":"anthropic","model":"%s","success":true,"retries":%d,"durationMs":%d}' \
				"$model" $((n - 1)) $(($(now_ms) - start)))"
			return 0
		fi
		retry=false delay=0
		if [ "$ft" != invalid_request ] && [ "$n" -le ${#backoff[@]} ]; then
			retry=true delay=${backoff[n - 1]}
		fi
		emit RetryAttempt "$(printf '{"provider":"anthropic","model":"%s","attempt":%d,"maxAttempts":%d,"failureType":"%s","status":%d,"errorMessage":"%s","willRetry":%s,"delayMs":%d,"delaySource":"%s"}' \
			"$model" "$n" $((${#backoff[@]} + 1)) "$ft" "$status" "$ft" "$retry" $((delay * 1000)) "$([ "$retry" = true ] && echo backoff || echo none)")"
		if [ "$retry" != true ]; then
			echo "[agent] attempt $n: $ft ($status)" >&2
			emit ProviderRequestFinished "$(printf '{"provider":"anthropic","model":"%s","success":false,"retries":%d,"failureType":"%s","durationMs":%d}' \
				"$model" $((n - 1)) "$ft" $(($(now_ms) - start)))"
			return 1
		fi
		echo "[agent] attempt $n: $ft ($status) — waiting ${delay}s" >&2
		sleep "$(awk -v d="$delay" -v s="$scale" 'BEGIN { printf "%.3f", d * s }')"
	done
}

ok=0
for ((i = 1; i <= requests; i++)); do
	request || ok=1
done
exit $ok
