package chaos

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// envMap is env as os/exec would pass it: the last value of each name.
func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// TestExternalEnv: an external client gets a HOME and XDG folders of its
// own inside its run folder, the quiet switches, client.env (which may
// override a quiet switch), the runner's variables it names in
// inheritEnv (which may too), and the harness's variables, and does not
// inherit the runner's provider or agent settings, nor anything else.
func TestExternalEnv(t *testing.T) {
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "real-token-of-the-user")
	t.Setenv("CLAUDE_CONFIG_DIR", "/home/user/.claude")
	t.Setenv("CODEX_HOME", "/home/user/.codex")
	t.Setenv("XDG_CONFIG_HOME", "/home/user/.config")
	t.Setenv("RETRYLAB_TEST_KEEP", "kept")
	t.Setenv("QWEN_HOME", "/home/user/.qwen")
	t.Setenv("OPENCODE_CONFIG_DIR", "/home/user/.config/opencode")
	t.Setenv("DASHSCOPE_API_KEY", "real-key-of-the-user")
	t.Setenv("PI_CODING_AGENT_DIR", "/home/user/.pi/agent")
	t.Setenv("AWS_PROFILE", "asked-for")
	t.Setenv("KILO_TELEMETRY_LEVEL", "all")
	t.Setenv("PATH", "/runner/bin:/usr/bin")
	t.Setenv("LC_ALL", "C.UTF-8")
	dir := t.TempDir()
	sc := &scenario.Scenario{Name: "s", Provider: "anthropic", Model: "m", Requests: 1,
		Client: scenario.Client{Command: []string{"true"}, Env: map[string]string{"CLAUDE_CODE_MAX_RETRIES": "3", "DISABLE_TELEMETRY": "0",
			"OPENCODE_CONFIG_CONTENT": `{"baseURL": "${ANTHROPIC_BASE_URL}/v1", "literal": "$${HOME}", "shell": "${PATH}"}`}}}
	inherit := []string{"AWS_PROFILE", "KILO_TELEMETRY_LEVEL", "NOT_SET_ANYWHERE"}
	env, vars, missing, err := externalEnv(sc, inherit, "http://127.0.0.1:1", dir, filepath.Join(dir, "trace.jsonl"), 1, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:2"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"NOT_SET_ANYWHERE"}, missing); diff != "" {
		t.Errorf("externalEnv() missing mismatch (-want +got):\n%s", diff)
	}
	if _, ok := envMap(env)["NOT_SET_ANYWHERE"]; ok {
		t.Error("a name the runner lacks reached the client (it should be unset, not empty)")
	}
	m := envMap(env)
	home := filepath.Join(dir, client.ClientHomeDir)
	want := map[string]string{
		"HOME":                          home,
		"XDG_CONFIG_HOME":               filepath.Join(home, ".config"),
		"XDG_CACHE_HOME":                filepath.Join(home, ".cache"),
		"XDG_DATA_HOME":                 filepath.Join(home, ".local/share"),
		"XDG_STATE_HOME":                filepath.Join(home, ".local/state"),
		"TMPDIR":                        filepath.Join(home, "tmp"),
		"ANTHROPIC_BASE_URL":            "http://127.0.0.1:1",
		"ANTHROPIC_API_KEY":             redact.FakeAPIKey,
		"CLAUDE_CODE_MAX_RETRIES":       "3",
		"DISABLE_TELEMETRY":             "0", // client.env overrides a quiet switch
		"DISABLE_AUTOUPDATER":           "1",
		"DO_NOT_TRACK":                  "1",
		"RETRYLAB_TEST_KEEP":            "", // not the harness's: the runner's, not asked for
		"AWS_PROFILE":                   "asked-for",
		"KILO_TELEMETRY_LEVEL":          "all", // inheritEnv overrides a quiet switch
		"PATH":                          "/runner/bin:/usr/bin",
		"LC_ALL":                        "C.UTF-8",
		"OTEL_EXPORTER_OTLP_ENDPOINT":   "http://127.0.0.1:2",
		"ANTHROPIC_AUTH_TOKEN":          "",
		"CLAUDE_CONFIG_DIR":             "",
		"CODEX_HOME":                    "",
		"QWEN_HOME":                     "",
		"OPENCODE_CONFIG_DIR":           "",
		"DASHSCOPE_API_KEY":             "",
		"PI_CODING_AGENT_DIR":           "",
		"PI_OFFLINE":                    "1",
		"OPENAI_AGENTS_DISABLE_TRACING": "1",
		"OPENCODE_DISABLE_AUTOUPDATE":   "1",
		"OPENCODE_CONFIG_CONTENT":       `{"baseURL": "http://127.0.0.1:1/v1", "literal": "${HOME}", "shell": "${PATH}"}`,
	}
	got := map[string]string{}
	for k := range want {
		got[k] = m[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("externalEnv() mismatch (-want +got):\n%s", diff)
	}
	if vars["HOME"] != home || vars["OPENAI_BASE_URL"] != "http://127.0.0.1:1/v1" || vars["PATH"] != "" {
		t.Errorf("externalEnv() vars = %v, want the harness's variables only", vars)
	}
	for _, sub := range []string{"", ".config", ".cache", ".local/share", ".local/state", "tmp"} {
		if fi, err := os.Stat(filepath.Join(home, sub)); err != nil || !fi.IsDir() {
			t.Errorf("%s: not a folder (%v)", filepath.Join(home, sub), err)
		}
	}
}

// TestToolchainEnv: the toolchains' caches stay the user's under the
// client's empty HOME, unless the runner's environment names them.
func TestToolchainEnv(t *testing.T) {
	got := envMap(client.ToolchainEnv([]string{"PATH=/bin", "GOCACHE=/own/cache"}, "/home/u", "/home/u/.cache"))
	want := map[string]string{
		"GOPATH":           "/home/u/go",
		"PYTHONUSERBASE":   "/home/u/.local",
		"NPM_CONFIG_CACHE": "/home/u/.npm",
		"CARGO_HOME":       "/home/u/.cargo",
		"RUSTUP_HOME":      "/home/u/.rustup",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("toolchainEnv() mismatch (-want +got):\n%s", diff)
	}
	if got := client.ToolchainEnv(nil, "", ""); len(got) != 0 {
		t.Errorf("toolchainEnv without a home = %v, want nothing", got)
	}
}

// TestClientHomeEndToEnd: an external client runs in an empty HOME of its
// own inside its run folder, with client.env; what it leaves there is part
// of its run folder: keys scrubbed, a link left as it is and never
// followed (its target, outside, is untouched); and two scenarios never
// share a home.
func TestClientHomeEndToEnd(t *testing.T) {
	toxi := runnerToxi(t)
	outside := filepath.Join(t.TempDir(), "user-settings.json")
	if err := os.WriteFile(outside, []byte(`{"theme":"dark"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	clientOf := func(name string) *scenario.Scenario {
		return parse(t, name, `
client:
  env: {AGENT_SETTING: "from-scenario"}
  command:
    - sh
    - -c
    - |
      test -z "$(ls -A "$HOME" | grep -v -e '^\.config$' -e '^\.cache$' -e '^\.local$' -e '^tmp$' -e '^\.qwen$' -e '^\.gemini$')" || { echo "home not empty" >&2; exit 3; }
      mkdir -p "$HOME/.agent" && printf '{"key":"%s","setting":"%s"}\n' "$ANTHROPIC_API_KEY" "$AGENT_SETTING" > "$HOME/.agent/state.json"
      ln -s `+outside+` "$HOME/.agent/link.json"
      echo "$HOME" "$XDG_CONFIG_HOME" "$TMPDIR"
attempts: []
expect: {outcome: success, attempts: 0}
`)
	}
	out := t.TempDir()
	r := &Runner{Toxi: toxi, Out: out, Seed: 1}
	sum, err := r.Run(context.Background(), []*scenario.Scenario{clientOf("one"), clientOf("two")})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"one", "two"} {
		res := byName(sum)[name]
		if res.Verdict != VerdictPass {
			t.Fatalf("%s: %s", name, describeResult(res))
		}
		home := filepath.Join(sum.RunDir, name, client.ClientHomeDir)
		b, err := os.ReadFile(filepath.Join(home, ".agent", "state.json"))
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"key":"sk-***","setting":"from-scenario"}` + "\n"; string(b) != want {
			t.Errorf("%s: state.json = %q, want %q (the key scrubbed)", name, b, want)
		}
		if fi, err := os.Lstat(filepath.Join(home, ".agent", "link.json")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: link.json is not the link the client left (%v)", name, err)
		}
		out, _ := os.ReadFile(filepath.Join(sum.RunDir, name, "stdout.txt"))
		if want := home + " " + filepath.Join(home, ".config") + " " + filepath.Join(home, "tmp") + "\n"; string(out) != want {
			t.Errorf("%s: stdout = %q, want %q", name, out, want)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != `{"theme":"dark"}` {
		t.Errorf("the file outside the run folder changed: %q", b)
	}
	assertNoKey(t, out)
}

func TestExpandHarness(t *testing.T) {
	vars := map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "HOME": "/run/s/home", "RETRYLAB_MODEL": "gpt-5", "PATH": "/bin"}
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"${OPENAI_BASE_URL}", "http://127.0.0.1:9/v1"},
		{`base_url="${OPENAI_BASE_URL}", m=${RETRYLAB_MODEL}`, `base_url="http://127.0.0.1:9/v1", m=gpt-5`},
		{"${HOME}/.qwen/settings.json", "/run/s/home/.qwen/settings.json"},
		{"$${HOME}", "${HOME}"},                  // a literal
		{"${PATH}", "${PATH}"},                   // not the harness's: left for a shell
		{"${RETRYLAB_NOPE}", "${RETRYLAB_NOPE}"}, // the harness's kind, but not set
		{"$HOME ${HOME:-x} ${}", "$HOME ${HOME:-x} ${}"},
	}
	for _, tt := range tests {
		if got := client.ExpandHarness(tt.in, vars); got != tt.want {
			t.Errorf("expandHarness(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestWriteHomeFiles: QuietHome and client.home are written into the
// client's home, client.home's contents expanded and winning over a
// QuietHome file of the same path.
func TestWriteHomeFiles(t *testing.T) {
	// quiet is QuietHome with the files given.
	quiet := func(files map[string]string) map[string]string {
		m := maps.Clone(scenario.QuietHome)
		maps.Copy(m, files)
		return m
	}
	for _, tt := range []struct {
		name  string
		files map[string]string
		want  map[string]string
	}{
		{"quiet only", nil, scenario.QuietHome},
		{"scenario's files", map[string]string{".config/opencode/opencode.json": `{"baseURL": "${OPENAI_BASE_URL}"}`},
			quiet(map[string]string{".config/opencode/opencode.json": `{"baseURL": "http://127.0.0.1:9/v1"}`})},
		{"scenario's replaces quiet", map[string]string{".qwen/settings.json": "{}"}, quiet(map[string]string{".qwen/settings.json": "{}"})},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if err := client.WriteHomeFiles(home, tt.files, map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			err := filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := os.ReadFile(p)
				rel, _ := filepath.Rel(home, p)
				got[filepath.ToSlash(rel)] = string(b)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("home files mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if err := client.WriteHomeFiles(t.TempDir(), map[string]string{"../escape": "x"}, nil); err == nil {
		t.Error("writeHomeFiles with ../escape: no error")
	}
}

// TestClientHomeFilesEndToEnd: an external client finds QuietHome's and
// client.home's files in its HOME, and ${NAME} of the harness's variables
// expanded in its arguments, its client.env values and those files, the
// mock's URL among them; other ${...} reach it as written.
func TestClientHomeFilesEndToEnd(t *testing.T) {
	toxi := runnerToxi(t)
	sc := parse(t, "homefiles", `
model: m-1
client:
  env: {AGENT_CONFIG: '{"baseURL": "${ANTHROPIC_BASE_URL}/v1"}', SHELL_VAR: "${PATH}"}
  home:
    .agent/config.json: '{"model": "${RETRYLAB_MODEL}", "literal": "$${HOME}"}'
  command:
    - sh
    - -c
    - |
      test "$1" = "$HOME/.agent/config.json" || { echo "argument $1" >&2; exit 3; }
      test "$SHELL_VAR" = '${PATH}' || { echo "SHELL_VAR $SHELL_VAR" >&2; exit 4; }
      case "$AGENT_CONFIG" in '{"baseURL": "'"$ANTHROPIC_BASE_URL"'/v1"}') ;; *) echo "AGENT_CONFIG $AGENT_CONFIG" >&2; exit 5;; esac
      grep -q usageStatisticsEnabled "$HOME/.qwen/settings.json" || exit 6
      cat "$1"
    - agent
    - ${HOME}/.agent/config.json
attempts: []
expect: {outcome: success, attempts: 0, output: {contains: ['{"model": "m-1", "literal": "${HOME}"}']}}
`)
	r := &Runner{Toxi: toxi, Out: t.TempDir(), Seed: 1}
	sum, err := r.Run(context.Background(), []*scenario.Scenario{sc})
	if err != nil {
		t.Fatal(err)
	}
	if res := byName(sum)["homefiles"]; res.Verdict != VerdictPass {
		errOut, _ := os.ReadFile(filepath.Join(sum.RunDir, "homefiles", "stderr.txt"))
		t.Fatalf("%s\nstderr: %s", describeResult(res), errOut)
	}
}
