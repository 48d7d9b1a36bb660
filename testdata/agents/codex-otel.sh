#!/bin/sh
# Codex CLI as codex.sh runs it, with its OpenTelemetry export on and sent
# to retrylab's OTLP/HTTP receiver. Codex reads no OTEL_* switch: its
# exporters are set only in its config ([otel] in config.toml, or -c), so
# this turns the receiver's OTEL_EXPORTER_OTLP_ENDPOINT and the standard
# switches into -c flags. Logs (codex.api_request, codex.sse_event, ...)
# unless OTEL_LOGS_EXPORTER=none; spans only with OTEL_TRACES_EXPORTER=otlp
# and metrics only with OTEL_METRICS_EXPORTER=otlp (else none, which also
# keeps Codex's default metrics exporter off); OTLP/JSON when
# OTEL_EXPORTER_OTLP_PROTOCOL=http/json, else protobuf. The prompt is not
# exported (otel.log_user_prompt=false). docs/agents.md.
here=$(cd "$(dirname "$0")" && pwd)
: "${OTEL_EXPORTER_OTLP_ENDPOINT:?codex-otel.sh: OTEL_EXPORTER_OTLP_ENDPOINT is not set (retrylab sets it)}"
base=${OTEL_EXPORTER_OTLP_ENDPOINT%/}
proto=binary
[ "$OTEL_EXPORTER_OTLP_PROTOCOL" = "http/json" ] && proto=json
otlp() { printf '{otlp-http={endpoint="%s/v1/%s", protocol="%s"}}' "$base" "$1" "$proto"; }
logs=$(otlp logs)
[ "$OTEL_LOGS_EXPORTER" = none ] && logs=none
traces=none
[ "$OTEL_TRACES_EXPORTER" = otlp ] && traces=$(otlp traces)
metrics=none
[ "$OTEL_METRICS_EXPORTER" = otlp ] && metrics=$(otlp metrics)
exec "$here/codex.sh" \
  -c "otel.exporter=$logs" -c "otel.trace_exporter=$traces" -c "otel.metrics_exporter=$metrics" \
  -c otel.log_user_prompt=false "$@"
