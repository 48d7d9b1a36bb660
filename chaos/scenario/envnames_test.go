package scenario

import (
	"fmt"
	"strings"
	"testing"
)

// TestClientEnvOTLPRejected: client.env may name none of the OTLP
// endpoints the harness owns, each refused alike (the general one was
// refused, a signal's passed validation and was overridden), and no
// protocol the receiver does not speak.
func TestClientEnvOTLPRejected(t *testing.T) {
	tests := []struct {
		name, value string
		problem     string
	}{
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318", "is set by retrylab for every external client: the run's own OTLP receiver"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://collector:4318/v1/traces", "is set by retrylab for every external client: the run's own OTLP receiver"},
		{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "http://collector:4318/v1/logs", "is set by retrylab for every external client: the run's own OTLP receiver"},
		{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://collector:4318/v1/metrics", "is set by retrylab for every external client: the run's own OTLP receiver"},
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", `is "grpc": the run's OTLP receiver speaks OTLP/HTTP only`},
		{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc", `is "grpc": the run's OTLP receiver speaks OTLP/HTTP only`},
		{"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "http", `is "http": the run's OTLP receiver speaks OTLP/HTTP only`},
		{"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "", `is "": the run's OTLP receiver speaks OTLP/HTTP only`},
	}
	hints := map[string]string{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := fmt.Sprintf("client:\n  command: [\"true\"]\n  env: {%s: %q}\n", tc.name, tc.value)
			_, err := ParseScenario("otel.yaml", []byte(src))
			if err == nil {
				t.Fatalf("%s=%s accepted", tc.name, tc.value)
			}
			if !strings.Contains(err.Error(), "client.env."+tc.name+": "+tc.name+" "+tc.problem) {
				t.Errorf("error = %v, want %q at client.env.%s", err, tc.problem, tc.name)
			}
			p, hint := envProblem(tc.name, tc.value)
			if p == "" || hint == "" {
				t.Fatalf("envProblem(%s, %q) = %q, %q; want a problem and a hint", tc.name, tc.value, p, hint)
			}
			kind := tc.name[strings.LastIndex(tc.name, "_")+1:] // ENDPOINT or PROTOCOL
			hints[kind] += "|" + hint
		})
	}
	for kind, hs := range hints {
		if first := strings.Split(hs, "|")[1]; strings.Count(hs, "|"+first) != 4 {
			t.Errorf("the four %s variables give different hints: %q", kind, hs)
		}
	}
	for _, ok := range []string{"http/json", "http/protobuf"} {
		if p, _ := envProblem("OTEL_EXPORTER_OTLP_PROTOCOL", ok); p != "" {
			t.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: %s", ok, p)
		}
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_TRACES_EXPORTER"} {
		if p, _ := envProblem(name, "x"); p != "" {
			t.Errorf("%s: %s, want it allowed", name, p)
		}
	}
}
