#!/bin/sh
# A client whose behaviour changes from run to run, for TestProbeRandomClient:
# each run takes the next number of a counter (DIR/0, DIR/1, ... made with
# mkdir, atomic under parallel runs) and sends the number of requests
# SEQ says for it (a space-separated list, cycled: "1 3 0" by default,
# RETRYLAB_RANDOM_SEQ overrides), one after another, without waiting. It
# exits 0 when its last request was answered 200, 1 otherwise. No sleeps.
set -u
dir=$1
seq=${2:-${RETRYLAB_RANDOM_SEQ:-1 3 0}}
n=0
while ! mkdir "$dir/$n" 2>/dev/null; do n=$((n + 1)); done
set -- $seq
k=$(( n % $# + 1 ))
eval "reqs=\${$k}"
base=${ANTHROPIC_BASE_URL%/}
body='{"model":"claude-haiku-4-5","max_tokens":16,"stream":false,"messages":[{"role":"user","content":"hi"}]}'
status=none
i=0
while [ "$i" -lt "$reqs" ]; do
	status=$(curl -sS -o /dev/null --max-time 20 -w '%{http_code}' -X POST "$base/v1/messages" \
		-H 'x-api-key: k' -H 'anthropic-version: 2023-06-01' -H 'content-type: application/json' -d "$body")
	i=$((i + 1))
done
[ "$status" = 200 ] || [ "$status" = none ]
