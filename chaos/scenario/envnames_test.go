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

func TestEnvNameProblem(t *testing.T) {
	tests := []struct {
		name string
		bad  bool
	}{
		{"CLAUDE_CODE_MAX_RETRIES", false},
		{"_x1", false},
		{"DISABLE_TELEMETRY", false}, // a quiet switch may be overridden
		{"1X", true},
		{"A-B", true},
		{"", true},
		{"A=B", true},
		{"OPENAI_BASE_URL", true},
		{"OPENAI_API_KEY", true},
		{"TMPDIR", true},
		{"RETRYLAB_ANYTHING", true},
	}
	for _, tt := range tests {
		if p, _ := envNameProblem(tt.name); (p != "") != tt.bad {
			t.Errorf("envNameProblem(%q) = %q, want bad=%v", tt.name, p, tt.bad)
		}
	}
}

func TestHomeFileProblem(t *testing.T) {
	tests := []struct {
		name string
		bad  bool
	}{
		{".qwen/settings.json", false},
		{".config/opencode/opencode.json", false},
		{"a", false},
		{"", true},
		{"/etc/passwd", true},
		{"../x", true},
		{".", true},
		{"./", true},
		{".config/../../x", true},
		{`a\b`, true},
		// Folders the harness makes, and their parents.
		{".cache", true},
		{".config", true},
		{".local", true},
		{".local/share", true},
		{".local/state/", true},
		{"tmp", true},
		{"./tmp", true},
		{".qwen", true},
		{"tmp/notes.txt", false},
		{".local/share/x.json", false},
		{"dir/", true},
	}
	for _, tt := range tests {
		if p, _ := HomeFileProblem(tt.name); (p != "") != tt.bad {
			t.Errorf("homeFileProblem(%q) = %q, want bad=%v", tt.name, p, tt.bad)
		}
	}
}

// TestHomeFilesConflict: two client.home keys of which one is inside the
// other cannot both be files.
func TestHomeFilesConflict(t *testing.T) {
	for _, tt := range []struct {
		names []string
		bad   bool
	}{
		{[]string{"a", "b", "c/d"}, false},
		{[]string{"a", "a/b"}, true},
		{[]string{"x/y/z", "x/y"}, true},
		{[]string{"a/b", "./a/b"}, true},
		{[]string{"ab", "a/b"}, false},
	} {
		if got := homeFilesConflict(tt.names); (got != "") != tt.bad {
			t.Errorf("homeFilesConflict(%q) = %q, want bad=%v", tt.names, got, tt.bad)
		}
	}
}
