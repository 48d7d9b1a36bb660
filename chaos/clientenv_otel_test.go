package chaos

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/otlp"
)

// TestClientEnvOTLPProtocol: the OTLP protocol variables client.env sets
// reach the client as they are (the receiver speaks JSON and protobuf);
// the harness sets one only where client.env leaves it out and what the
// client inherits of the runner's environment (client.inheritEnv: "runner"
// below) has none the receiver speaks (finding 13: the runner's
// environment used to decide alone, so client.env's http/json became
// http/protobuf).
func TestClientEnvOTLPProtocol(t *testing.T) {
	const (
		all     = "OTEL_EXPORTER_OTLP_PROTOCOL"
		traces  = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
		logs    = "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL"
		metrics = "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"
	)
	tests := []struct {
		name     string
		scenario map[string]string
		runner   map[string]string
		want     map[string]string // the protocol variables the client ends with
	}{
		{"nothing set: http/protobuf", nil, nil, map[string]string{all: "http/protobuf"}},
		{"client.env http/json", map[string]string{all: "http/json"}, nil, map[string]string{all: "http/json"}},
		{"client.env wins over the runner's", map[string]string{all: "http/json"}, map[string]string{all: "http/protobuf"},
			map[string]string{all: "http/json"}},
		{"client.env http/json over the runner's grpc", map[string]string{all: "http/json"}, map[string]string{all: "grpc"},
			map[string]string{all: "http/json"}},
		{"the runner's http/json passes through", nil, map[string]string{all: "http/json"}, map[string]string{all: "http/json"}},
		{"the runner's grpc replaced", nil, map[string]string{all: "grpc"}, map[string]string{all: "http/protobuf"}},
		{"a signal's own, from client.env", map[string]string{traces: "http/json"}, nil,
			map[string]string{all: "http/protobuf", traces: "http/json"}},
		{"the runner's grpc for one signal follows client.env's general one", map[string]string{all: "http/json"},
			map[string]string{logs: "grpc", metrics: "http/protobuf"},
			map[string]string{all: "http/json", logs: "http/json", metrics: "http/protobuf"}},
		{"client.env's signal wins over the runner's grpc for it", map[string]string{logs: "http/protobuf"},
			map[string]string{logs: "grpc", all: "grpc"}, map[string]string{all: "http/protobuf", logs: "http/protobuf"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runner := make([]string, 0, len(tc.runner))
			for k, v := range tc.runner {
				runner = append(runner, k+"="+v)
			}
			// The client's environment, layer by layer as externalEnv
			// builds it: the runner's, client.env, the harness's.
			env := append(runner, client.ScenarioEnv(tc.scenario, nil)...)
			env = append(env, protocolEnv(tc.scenario, func(k string) string { return tc.runner[k] })...)
			got := map[string]string{}
			for k, v := range envMap(env) {
				if strings.HasSuffix(k, "PROTOCOL") {
					got[k] = v
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("protocols (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClientEnvOTLPExternal: an external client's whole environment keeps
// client.env's OTLP protocol, headers, compression and timeout, the
// endpoints are the run's receiver's, and ${...} in a value expands any of
// them.
func TestClientEnvOTLPExternal(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://collector.example:4318/v1/traces")
	dir := t.TempDir()
	scEnv := map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_HEADERS": "x-team=a",
		"AGENT_TRACES_URL":               "${OTEL_EXPORTER_OTLP_TRACES_ENDPOINT}",
		"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_TIMEOUT": "2000", "OTEL_TRACES_EXPORTER": "otlp"}
	sc := &scenario.Scenario{Name: "s", Provider: "anthropic", Model: "m", Requests: 1, Client: scenario.Client{Command: []string{"true"}, Env: scEnv}}
	tel, err := startTelemetry("")
	if err != nil {
		t.Fatal(err)
	}
	defer tel.finish("r", "")
	env, _, _, err := externalEnv(sc, nil, "http://127.0.0.1:1", dir, filepath.Join(dir, "trace.jsonl"), 1, tel.env(sc.Client.Env, os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	m := envMap(env)
	want := map[string]string{}
	for k, v := range scEnv {
		want[k] = v
	}
	for _, kv := range tel.rcv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		want[k] = v
	}
	// A signal's endpoint is a harness name, as the general one: a value
	// may refer to it.
	want["AGENT_TRACES_URL"] = want["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
	got := map[string]string{}
	for k := range want {
		got[k] = m[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("client environment (-want +got):\n%s", diff)
	}
}

// TestTelemetryDropped: exports past the receiver's bounds are answered
// 200, counted in result.json's telemetry (dropped, droppedItems) and
// said in one warning line of the run's progress; the selfReport of a
// client whose attempts may be in what was dropped is unverified, not
// failed (finding 14: 1,500 exports answered 200, 334 kept, nothing said).
func TestTelemetryDropped(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	defer func(l otlp.Limits) { telemetryLimits = l }(telemetryLimits)
	telemetryLimits = otlp.Limits{Items: 2}
	export := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"chat","kind":3,"startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}}]}]}]}]}`
	sc := parse(t, "flood", `
client:
  command:
    - sh
    - -c
    - |
      curl -sS -o /dev/null -X POST "$ANTHROPIC_BASE_URL/v1/messages" -d '{"stream":true}'
      for i in 1 2 3 4 5; do
        code=$(curl -sS -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -d '`+export+`' "$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        test "$code" = 200 || { echo "export $i answered $code" >&2; exit 3; }
      done
expect: {attempts: 1, outcome: success}
`)
	var progress syncBuffer
	r := &Runner{Toxi: runnerToxi(t), Out: t.TempDir(), Seed: 1, Progress: &progress}
	sum, err := r.Run(context.Background(), []*scenario.Scenario{sc})
	if err != nil {
		t.Fatal(err)
	}
	res := sum.Scenarios[0]
	want := &verify.Telemetry{Exports: 5, Kept: 2, Items: 2, Dropped: 3, DroppedItems: 3, Unknown: 0}
	if diff := cmp.Diff(want, res.Telemetry, cmpIgnoreMapping()); diff != "" {
		t.Errorf("telemetry (-want +got):\n%s\nprogress:\n%s", diff, progress.String())
	}
	b, err := os.ReadFile(filepath.Join(sum.RunDir, "flood", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct{ Telemetry map[string]any }
	if err := json.Unmarshal(b, &file); err != nil || file.Telemetry["dropped"] != 3.0 || file.Telemetry["droppedItems"] != 3.0 {
		t.Errorf("result.json telemetry = %v (%v), want dropped 3, droppedItems 3", file.Telemetry, err)
	}
	if n := strings.Count(progress.String(), "warning: client telemetry: 3 of 5 export(s) (3 item(s)) answered 200 but not kept"); n != 1 {
		t.Errorf("progress has %d warning lines about the dropped exports, want 1:\n%s", n, progress.String())
	}
}

// cmpIgnoreMapping leaves out what a mapping made of the exports: only
// the receiver's counts are this test's.
func cmpIgnoreMapping() cmp.Option {
	return cmp.FilterPath(func(p cmp.Path) bool {
		s := p.String()
		return s == "Mapping" || s == "Attempts" || s == "Unknown" || s == "Notes"
	}, cmp.Ignore())
}

// TestBaseEnvOTLPCredentials: no OTEL_ setting of the runner's reaches an
// external client unless it is named (inheritEnv), not its own
// collector's token and certificates (which were left out by name before
// the allowlist) nor the rest.
func TestBaseEnvOTLPCredentials(t *testing.T) {
	t.Parallel()
	in := []string{
		"OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer real-collector-token",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS=x-api-key=k",
		"OTEL_EXPORTER_OTLP_CERTIFICATE=/etc/ca.pem",
		"OTEL_EXPORTER_OTLP_LOGS_CLIENT_KEY=/etc/key.pem",
		"OTEL_EXPORTER_OTLP_COMPRESSION=gzip",
		"OTEL_SERVICE_NAME=svc",
		"ANTHROPIC_API_KEY=sk-ant-real",
		"PATH=/usr/bin",
	}
	if diff := cmp.Diff([]string{"PATH=/usr/bin"}, client.BaseEnv(in)); diff != "" {
		t.Errorf("baseEnv mismatch (-want +got):\n%s", diff)
	}
	got, missing := client.InheritedEnv(in, []string{"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"})
	if diff := cmp.Diff([]string{"OTEL_SERVICE_NAME=svc"}, got); diff != "" {
		t.Errorf("inheritedEnv mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"OTEL_RESOURCE_ATTRIBUTES"}, missing); diff != "" {
		t.Errorf("inheritedEnv missing mismatch (-want +got):\n%s", diff)
	}
}

// TestSelfReportEndToEnd runs a tiny external client that reports its
// attempts only in OpenTelemetry (testdata/clients/otel_agent.py, OTLP/JSON
// spans by the semantic conventions): told the truth, selfReport passes and
// failureTypes are verified; leaving an attempt out or claiming another
// status fails selfReport. A client that sends none gets no selfReport.
func TestSelfReportEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	agent, _ := filepath.Abs("../testdata/clients/otel_agent.py")
	mk := func(name, mode string) *scenario.Scenario {
		return parse(t, name, `
client: {command: [python3, `+agent+`, `+mode+`]}
attempts: [{status: 529}, {status: 429}]
expect: {outcome: success, attempts: 3, failureTypes: [overloaded, rate_limit]}
`)
	}
	scs := []*scenario.Scenario{mk("truthful", "truthful"), mk("omit", "omit"), mk("status", "status"),
		parse(t, "silent", `
client: {command: [sh, -c, 'curl -sS -o /dev/null -X POST "$ANTHROPIC_BASE_URL/v1/messages" -d "{}"']}
expect: {outcome: success, attempts: 1}
`)}
	r := &Runner{Toxi: runnerToxi(t), Out: t.TempDir(), Seed: 1}
	sum, err := r.Run(context.Background(), scs)
	if err != nil {
		t.Fatal(err)
	}
	res := byName(sum)
	check := func(name, check string) verify.Check {
		for _, c := range res[name].Checks {
			if c.Name == check {
				return c
			}
		}
		return verify.Check{}
	}
	if c := check("truthful", "selfReport"); c.State != verify.StatePass {
		t.Errorf("truthful: selfReport = %+v, want pass", c)
	}
	if c := check("truthful", "failureTypes"); c.State != verify.StatePass {
		t.Errorf("truthful: failureTypes = %+v, want pass (verified from its telemetry)", c)
	}
	if tel := res["truthful"].Telemetry; tel == nil || tel.Mapping != "semconv" || tel.Attempts != 3 {
		t.Errorf("truthful: telemetry = %+v, want 3 attempts read by semconv", tel)
	}
	dir := filepath.Join(sum.RunDir, "truthful")
	if _, err := os.Stat(filepath.Join(dir, "otlp", "traces-0001.json")); err != nil {
		t.Errorf("the export is not kept: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, verify.ClientOtelFile))
	if err != nil || strings.Count(string(b), `"type":"RetryAttempt"`) != 2 || strings.Count(string(b), `"type":"ProviderRequestFinished"`) != 1 {
		t.Errorf("%s = %q (%v), want 2 RetryAttempt and 1 ProviderRequestFinished", verify.ClientOtelFile, b, err)
	}
	for name, hint := range map[string]string{"omit": "leaves out 1 attempt", "status": "claims status 500, the server sent 529"} {
		c := check(name, "selfReport")
		if c.State != verify.StateFail || !strings.Contains(c.Hint, hint) {
			t.Errorf("%s: selfReport = %+v, want a failure saying %q", name, c, hint)
		}
	}
	if c := check("silent", "selfReport"); c.Name != "" || res["silent"].Telemetry != nil {
		t.Errorf("silent: selfReport = %+v, telemetry %+v; want neither", c, res["silent"].Telemetry)
	}
	assertNoKey(t, sum.RunDir)
}
