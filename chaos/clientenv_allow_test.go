package chaos

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// runnerSecrets is a developer's environment as issue 27 found it: other
// providers' and agents' keys, cloud credentials, tokens, an SSH agent, a
// proxy and a Go proxy with a password in the URL, the runner's own
// collector's token, its own XDG folder and CI. Every value is unique and
// looks like no key the redaction knows, so a leak shows as it is.
var runnerSecrets = map[string]string{
	"KILO_API_KEY":                   "planted-kilo-value",
	"CONTINUE_API_KEY":               "planted-continue-value",
	"OPENAI_API_KEY":                 "planted-openai-value",
	"ANTHROPIC_AUTH_TOKEN":           "planted-anthropic-token",
	"GEMINI_API_KEY":                 "planted-gemini-value",
	"GOOGLE_API_KEY":                 "planted-google-value",
	"GOOGLE_APPLICATION_CREDENTIALS": "/planted/gcp-service-account.json",
	"AWS_ACCESS_KEY_ID":              "planted-aws-id",
	"AWS_SECRET_ACCESS_KEY":          "planted-aws-secret",
	"AWS_SESSION_TOKEN":              "planted-aws-session",
	"AWS_PROFILE":                    "planted-aws-profile",
	"AZURE_OPENAI_API_KEY":           "planted-azure-value",
	"OPENROUTER_API_KEY":             "planted-openrouter-value",
	"GITHUB_TOKEN":                   "planted-github-token",
	"NPM_TOKEN":                      "planted-npm-token",
	"CLAUDE_CODE_OAUTH_TOKEN":        "planted-claude-oauth",
	"CODEX_ACCESS_TOKEN":             "planted-codex-token",
	"SSH_AUTH_SOCK":                  "/planted/ssh-agent.sock",
	"HTTPS_PROXY":                    "http://user:planted-proxy-pw@proxy:3128",
	"GOPROXY":                        "https://user:planted-goproxy-pw@goproxy.corp",
	"OTEL_EXPORTER_OTLP_HEADERS":     "authorization=planted-collector-token",
	"DATABASE_URL":                   "postgres://app:planted-db-pw@db/app",
	"XDG_CONFIG_HOME":                "/planted/xdg-config",
	"CI":                             "planted-ci",
}

// setRunnerSecrets plants runnerSecrets in the test's environment, and a
// TMPDIR of the runner's own (a real folder: t.TempDir makes its folders
// there), which the client's environment must not name.
func setRunnerSecrets(t *testing.T) {
	for k, v := range runnerSecrets {
		t.Setenv(k, v)
	}
	t.Setenv("TMPDIR", t.TempDir())
}

// TestClientEnvAllowlist: a client takes of a runner's environment full of
// secrets only the allowlist (PATH, the locale, TERM, the toolchains'
// folders), exactly the names inheritEnv asks for, and the harness's own
// variables, which win over any of the runner's: HOME, TMPDIR and the XDG
// folders are the client's own, the keys the fake one.
func TestClientEnvAllowlist(t *testing.T) {
	setRunnerSecrets(t)
	t.Setenv("PATH", "/planted/bin:/usr/bin")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("LC_TIME", "en_GB.UTF-8")
	t.Setenv("TZ", "Europe/Paris")
	t.Setenv("TERM", "xterm-256color")
	t.Setenv("COLORTERM", "truecolor")
	t.Setenv("GOFLAGS", "-mod=readonly")
	tests := []struct {
		name    string
		inherit []string
		want    []string // the names of runnerSecrets the client gets, with the runner's value
		missing []string
	}{
		{name: "nothing asked: no secret", inherit: nil},
		{name: "one asked: that one", inherit: []string{"AWS_PROFILE"}, want: []string{"AWS_PROFILE"}},
		{name: "several asked: exactly those", inherit: []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "HTTPS_PROXY"},
			want: []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "HTTPS_PROXY"}},
		{name: "a name the runner lacks: unset, not empty", inherit: []string{"AWS_PROFILE", "NOT_IN_THE_RUNNER"},
			want: []string{"AWS_PROFILE"}, missing: []string{"NOT_IN_THE_RUNNER"}},
		// The loader and the CLI reject these names (InheritEnvProblem);
		// were one let through, the harness's value is the only one.
		{name: "a harness name asked: the harness's value", inherit: []string{"OPENAI_API_KEY", "TMPDIR", "XDG_CONFIG_HOME"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sc := &scenario.Scenario{Name: "s", Provider: "openai", Model: "m", Requests: 1, Client: scenario.Client{Command: []string{"true"}}}
			env, _, missing, err := externalEnv(sc, tc.inherit, "http://127.0.0.1:1", dir, filepath.Join(dir, "trace.jsonl"), 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.missing, missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
			m := envMap(env)
			for name, v := range runnerSecrets {
				got, ok := m[name]
				switch {
				case slices.Contains(tc.want, name):
					if got != v {
						t.Errorf("%s = %q, want the runner's %q (inheritEnv)", name, got, v)
					}
				case ok && got == v:
					t.Errorf("%s reached the client with the runner's value %q", name, v)
				}
			}
			// No planted value anywhere, under any name.
			for _, kv := range env {
				for name, v := range runnerSecrets {
					if !slices.Contains(tc.want, name) && strings.Contains(kv, v) {
						t.Errorf("the runner's %s leaked: %q", name, kv)
					}
				}
			}
			home := filepath.Join(dir, client.ClientHomeDir)
			wantEnv := map[string]string{
				"HOME":            home,
				"TMPDIR":          filepath.Join(home, "tmp"),
				"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
				"OPENAI_API_KEY":  redact.FakeAPIKey,
				"PATH":            "/planted/bin:/usr/bin",
				"LANG":            "C.UTF-8",
				"LC_TIME":         "en_GB.UTF-8",
				"TZ":              "Europe/Paris",
				"TERM":            "xterm-256color",
				"GOFLAGS":         "-mod=readonly",
				"COLORTERM":       "",
				"NPM_CONFIG_CACHE": func() string {
					h, _ := os.UserHomeDir()
					return filepath.Join(h, ".npm")
				}(),
			}
			got := map[string]string{}
			for k := range wantEnv {
				got[k] = m[k]
			}
			if diff := cmp.Diff(wantEnv, got); diff != "" {
				t.Errorf("client environment (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBaseEnv: what a client takes of the runner's environment unasked,
// name by name.
func TestBaseEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kv   string
		pass bool
	}{
		{"PATH=/bin", true},
		{"LANG=C.UTF-8", true},
		{"LANGUAGE=fr", true},
		{"LC_ALL=C", true},
		{"LC_MESSAGES=C", true},
		{"TZ=UTC", true},
		{"TERM=dumb", true},
		{"USER=u", true},
		{"LOGNAME=u", true},
		{"SHELL=/bin/bash", true},
		{"GOPATH=/go", true},
		{"GOMODCACHE=/go/pkg/mod", true},
		{"GOCACHE=/c", true},
		{"GOTOOLCHAIN=local", true},
		{"NPM_CONFIG_CACHE=/npm", true},
		{"VIRTUAL_ENV=/venv", true},
		{"CARGO_HOME=/cargo", true},
		{"VOLTA_HOME=/volta", true},
		{"COLORTERM=truecolor", false}, // output goes to files; NO_COLOR=1
		{"HOME=/home/u", false},        // the harness's
		{"TMPDIR=/tmp/u", false},       // the harness's
		{"XDG_CACHE_HOME=/c", false},   // the harness's
		{"CI=true", false},             // a client behaves alike on a laptop and in CI
		{"GOPROXY=https://u:pw@proxy", false},
		{"GOPRIVATE=corp.example", false},
		{"HTTP_PROXY=http://proxy", false},
		{"NODE_OPTIONS=--require x", false},
		{"SSH_AUTH_SOCK=/s", false},
		{"KILO_API_KEY=k", false},
		{"CONTINUE_API_KEY=k", false},
		{"AWS_SECRET_ACCESS_KEY=k", false},
		{"GOOGLE_APPLICATION_CREDENTIALS=/k.json", false},
		{"GH_TOKEN=k", false},
		{"LCX=1", false}, // not a locale category
		{"PATHEXT=.EXE", false},
	}
	for _, tt := range tests {
		got := client.BaseEnv([]string{tt.kv})
		if pass := len(got) == 1 && got[0] == tt.kv; pass != tt.pass {
			t.Errorf("baseEnv([%q]) = %q, want passed=%v", tt.kv, got, tt.pass)
		}
	}
}

func TestInheritEnvProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		bad  string // a substring of the problem; "" when fine
	}{
		{"AWS_PROFILE", ""},
		{"_x1", ""},
		{"PATH", ""},              // passed anyway: harmless
		{"DISABLE_TELEMETRY", ""}, // a quiet switch may be overridden
		{"1X", "not an environment variable name"},
		{"A-B", "not an environment variable name"},
		{"", "not an environment variable name"},
		{"AWS_PROFILE=dev", "not an environment variable name"},
		{"$AWS_PROFILE", "not an environment variable name"},
		{"OPENAI_API_KEY", "set by retrylab"},
		{"ANTHROPIC_BASE_URL", "set by retrylab"},
		{"HOME", "set by retrylab"},
		{"TMPDIR", "set by retrylab"},
		{"XDG_DATA_HOME", "set by retrylab"},
		{"RETRYLAB_ANYTHING", "set by retrylab"},
		{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "set by retrylab"},
	}
	for _, tt := range tests {
		p, hint := scenario.InheritEnvProblem(tt.name)
		if tt.bad == "" && p != "" || tt.bad != "" && !strings.Contains(p, tt.bad) {
			t.Errorf("InheritEnvProblem(%q) = %q, want %q", tt.name, p, tt.bad)
		}
		if p != "" && hint == "" {
			t.Errorf("InheritEnvProblem(%q): no hint", tt.name)
		}
	}
	if _, hint := scenario.InheritEnvProblem("AWS_PROFILE=dev"); !strings.Contains(hint, "client.env") {
		t.Errorf("a NAME=value entry: hint %q, want one pointing at client.env", hint)
	}
}

// TestClientEnvEndToEnd: an external client started by chaos run, in a
// runner's environment full of secrets, dumps its environment into its run
// folder: none of the secrets is there, under its name or by its value,
// and what client.inheritEnv and Runner.InheritEnv (--inherit-env) name
// is, as it is; a named variable the runner lacks is said in stderr.txt.
func TestClientEnvEndToEnd(t *testing.T) {
	toxi := runnerToxi(t)
	setRunnerSecrets(t)
	sc := parse(t, "dump", `
client:
  inheritEnv: [AWS_PROFILE, NOT_IN_THE_RUNNER]
  env: {SCENARIO_VAR: "from-scenario"}
  command:
    - sh
    - -c
    - env > "$(dirname "$RETRYLAB_TRACE")/env.txt"
attempts: []
expect: {outcome: success, attempts: 0}
`)
	r := &Runner{Toxi: toxi, Out: t.TempDir(), Seed: 1, InheritEnv: []string{"HTTPS_PROXY"}}
	sum, err := r.Run(context.Background(), []*scenario.Scenario{sc})
	if err != nil {
		t.Fatal(err)
	}
	res := byName(sum)["dump"]
	if res.Verdict != VerdictPass {
		t.Fatalf("dump: %s", describeResult(res))
	}
	b, err := os.ReadFile(filepath.Join(sum.RunDir, "dump", "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	asked := map[string]bool{"AWS_PROFILE": true, "HTTPS_PROXY": true}
	for name, v := range runnerSecrets {
		if asked[name] {
			if got[name] != v {
				t.Errorf("%s = %q, want the runner's %q (inherited by name)", name, got[name], v)
			}
			continue
		}
		if got[name] == v {
			t.Errorf("%s reached the client: %q", name, v)
		}
		if strings.Contains(string(b), v) {
			t.Errorf("the runner's %s is in the client's environment", name)
		}
	}
	for _, name := range []string{"KILO_API_KEY", "CONTINUE_API_KEY", "AWS_SECRET_ACCESS_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "SSH_AUTH_SOCK", "GITHUB_TOKEN", "CI"} {
		if _, ok := got[name]; ok {
			t.Errorf("%s is set in the client's environment", name)
		}
	}
	if _, ok := got["NOT_IN_THE_RUNNER"]; ok {
		t.Error("NOT_IN_THE_RUNNER is set in the client's environment; the runner has none")
	}
	home := filepath.Join(sum.RunDir, "dump", client.ClientHomeDir)
	for k, want := range map[string]string{"HOME": home, "TMPDIR": filepath.Join(home, "tmp"),
		"SCENARIO_VAR": "from-scenario", "DO_NOT_TRACK": "1"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	stderr, _ := os.ReadFile(filepath.Join(sum.RunDir, "dump", "stderr.txt"))
	if want := "retrylab: inheritEnv: NOT_IN_THE_RUNNER not set in retrylab's environment: the client runs without it\n"; string(stderr) != want {
		t.Errorf("stderr.txt = %q, want %q", stderr, want)
	}
}

// TestQuietAgents: the update, telemetry and upload switches of the agents
// tried so far (issue 27: Kilo CLI, Continue's cn, aider beside Claude
// Code, opencode, Qwen Code and pi) are in every external client's
// environment, and Gemini CLI's usage statistics, which only its settings
// file switches off, are off in the client's HOME.
func TestQuietAgents(t *testing.T) {
	dir := t.TempDir()
	sc := &scenario.Scenario{Name: "s", Provider: "gemini", Model: "m", Requests: 1, Client: scenario.Client{Command: []string{"true"}}}
	env, _, _, err := externalEnv(sc, nil, "http://127.0.0.1:1", dir, filepath.Join(dir, "trace.jsonl"), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := envMap(env)
	want := map[string]string{
		"DISABLE_TELEMETRY":                  "1",
		"DO_NOT_TRACK":                       "1",
		"KILO_TELEMETRY_LEVEL":               "off",
		"KILO_DISABLE_AUTOUPDATE":            "1",
		"KILO_DISABLE_MODELS_FETCH":          "1",
		"KILO_DISABLE_SHARE":                 "1",
		"KILO_DISABLE_SESSION_INGEST":        "1",
		"CONTINUE_TELEMETRY_ENABLED":         "0",
		"CONTINUE_ALLOW_ANONYMOUS_TELEMETRY": "0",
		"CONTINUE_CLI_ENABLE_TELEMETRY":      "0",
		"AIDER_ANALYTICS":                    "false",
		"AIDER_CHECK_UPDATE":                 "false",
		"OPENCODE_DISABLE_AUTOUPDATE":        "1",
	}
	got := map[string]string{}
	for k := range want {
		got[k] = m[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("quiet switches (-want +got):\n%s", diff)
	}
	b, err := os.ReadFile(filepath.Join(dir, client.ClientHomeDir, ".gemini", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var settings struct {
		Privacy struct {
			UsageStatisticsEnabled *bool `json:"usageStatisticsEnabled"`
		} `json:"privacy"`
		General struct {
			EnableAutoUpdate             *bool `json:"enableAutoUpdate"`
			EnableAutoUpdateNotification *bool `json:"enableAutoUpdateNotification"`
		} `json:"general"`
	}
	if err := json.Unmarshal(b, &settings); err != nil {
		t.Fatalf(".gemini/settings.json: %v", err)
	}
	for name, v := range map[string]*bool{"privacy.usageStatisticsEnabled": settings.Privacy.UsageStatisticsEnabled,
		"general.enableAutoUpdate": settings.General.EnableAutoUpdate, "general.enableAutoUpdateNotification": settings.General.EnableAutoUpdateNotification} {
		if v == nil || *v {
			t.Errorf(".gemini/settings.json: %s is not false: %s", name, b)
		}
	}
}
