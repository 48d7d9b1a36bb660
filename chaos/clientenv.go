package chaos

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// An external client's environment is built in three layers, later ones
// winning (os/exec keeps the last value of a name):
//
//  1. the runner's own environment, less what would point the client at
//     the user's settings or real accounts (inheritedEnv);
//  2. quietEnv, the switches that keep agents off the internet (update
//     checks, telemetry, error reports), which client.env may override;
//  3. client.env, the scenario's own variables;
//  4. the harness's variables (clientEnv, clientHome, telemetry.env): base
//     URLs, fake keys, RETRYLAB_*, HOME and the XDG folders, the OTLP
//     endpoints. A scenario cannot set them: the loader rejects client.env
//     entries that name one (reservedEnv, otlpEndpointVars), so nothing is
//     overridden silently. The OTLP protocol variables are set here only
//     where client.env leaves them out (protocolEnv); client.env may
//     set them to an OTLP/HTTP protocol, nothing else (envProblem).

// quietEnv switches off what coding agents do beside the answer when run
// unattended: update checks, telemetry and error reports sent to their
// vendors, and for Claude Code the non-essential model calls and traffic.
// Sources: Claude Code's settings documentation (DISABLE_AUTOUPDATER,
// DISABLE_TELEMETRY, DISABLE_ERROR_REPORTING, DISABLE_BUG_COMMAND,
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, DISABLE_NON_ESSENTIAL_MODEL_CALLS),
// the Console Do Not Track convention (DO_NOT_TRACK), npm's and
// update-notifier's (NO_UPDATE_NOTIFIER, NPM_CONFIG_UPDATE_NOTIFIER), Next
// and Vercel tooling (NEXT_TELEMETRY_DISABLED), LangChain's tracing
// (LANGCHAIN_TRACING_V2, LANGSMITH_TRACING), opencode's environment
// variables (opencode.ai/docs/cli, "Environment variables":
// OPENCODE_DISABLE_AUTOUPDATE, OPENCODE_DISABLE_MODELS_FETCH (its fetch of
// models.dev), OPENCODE_DISABLE_SHARE, OPENCODE_DISABLE_LSP_DOWNLOAD) and
// Qwen Code's settings reference (docs/users/configuration/settings.md in
// its package: QWEN_TELEMETRY_ENABLED) and pi's (pi --help and
// docs/settings.md of @mariozechner/pi-coding-agent: PI_OFFLINE, "disable
// all startup network operations", PI_TELEMETRY, PI_SKIP_VERSION_CHECK) and
// the OpenAI Agents SDK's (@openai/agents-core dist/config.mjs, tracing:
// OPENAI_AGENTS_DISABLE_TRACING; otherwise it posts its traces to
// api.openai.com/v1/traces/ingest, whatever OPENAI_BASE_URL says).
// Codex CLI has no environment switch
// for its analytics: its scenarios pass -c analytics.enabled=false
// (docs/agents.md); Qwen Code's usage statistics have none either:
// quietHome switches them off in its settings file.
var quietEnv = []string{
	"DISABLE_AUTOUPDATER=1",
	"DISABLE_TELEMETRY=1",
	"DISABLE_ERROR_REPORTING=1",
	"DISABLE_BUG_COMMAND=1",
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	"DISABLE_NON_ESSENTIAL_MODEL_CALLS=1",
	"DO_NOT_TRACK=1",
	"NO_UPDATE_NOTIFIER=1",
	"NPM_CONFIG_UPDATE_NOTIFIER=false",
	"NEXT_TELEMETRY_DISABLED=1",
	"LANGCHAIN_TRACING_V2=false",
	"LANGSMITH_TRACING=false",
	"OPENCODE_DISABLE_AUTOUPDATE=1",
	"OPENCODE_DISABLE_MODELS_FETCH=1",
	"OPENCODE_DISABLE_SHARE=1",
	"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
	"QWEN_TELEMETRY_ENABLED=false",
	"PI_OFFLINE=1",
	"PI_TELEMETRY=0",
	"PI_SKIP_VERSION_CHECK=1",
	"OPENAI_AGENTS_DISABLE_TRACING=1",
	"NO_COLOR=1",
}

// inheritedPrefixes are the names of the runner's environment an external
// client does not inherit: provider and agent settings (a real
// ANTHROPIC_AUTH_TOKEN would reach the mock; CLAUDE_CONFIG_DIR or
// CODEX_HOME, QWEN_HOME, OPENCODE_CONFIG_DIR or PI_CODING_AGENT_DIR would point the agent at
// the user's own settings; DASHSCOPE_API_KEY is Qwen Code's real key) and the XDG
// folders, which clientHome replaces. A scenario that needs one writes it
// in client.env. (OTEL_* pass through, but for the runner's own
// collector's credentials, otlpCredentialSuffixes: the run's receiver sets
// the endpoints, telemetry.go.)
var inheritedPrefixes = []string{"ANTHROPIC_", "OPENAI_", "CLAUDE_", "CLAUDECODE", "CODEX_", "GEMINI_", "GOOGLE_GEMINI_", "QWEN_", "OPENCODE_", "DASHSCOPE_", "PI_CODING_AGENT_", "XDG_"}

// otlpCredentialSuffixes end the runner's OTLP exporter settings that
// belong to its own collector, not to the run's loopback receiver: a
// collector's token in OTEL_EXPORTER_OTLP_HEADERS, its certificates. The
// client does not inherit them (client.env may set them).
var otlpCredentialSuffixes = []string{"_HEADERS", "_CERTIFICATE", "_CLIENT_KEY", "_CLIENT_CERTIFICATE"}

// inheritedEnv is env (os.Environ()) without the names of inheritedPrefixes
// and the runner's OTLP credentials.
func inheritedEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if slices.ContainsFunc(inheritedPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		if strings.HasPrefix(name, "OTEL_EXPORTER_OTLP_") &&
			slices.ContainsFunc(otlpCredentialSuffixes, func(s string) bool { return strings.HasSuffix(name, s) }) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// reservedEnv are the names the harness sets for every external client;
// client.env may not name them (nor any RETRYLAB_ name).
var reservedEnv = []string{
	"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL",
	"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY",
	"HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "TMPDIR",
}

// otlpEndpointVars are the OTLP endpoints the harness points at the run's
// own receiver (telemetry.go), all alike: client.env may not name one.
var otlpEndpointVars = []string{"OTEL_EXPORTER_OTLP_ENDPOINT",
	"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"}

// envNameRE is a portable environment variable name (POSIX: letters,
// digits and underscore, not starting with a digit).
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// envProblem says what is wrong with name=value as a client.env entry,
// and how to fix it; "" when it is fine.
func envProblem(name, value string) (problem, hint string) {
	if problem, hint := envNameProblem(name); problem != "" {
		return problem, hint
	}
	if slices.Contains(otlpProtocolVars, name) && !slices.Contains(otlpHTTPProtocols, value) {
		return fmt.Sprintf("%s is %q: the run's OTLP receiver speaks OTLP/HTTP only", name, value),
			"write http/protobuf or http/json, or leave it out (retrylab then asks for http/protobuf)"
	}
	return "", ""
}

// envNameProblem says what is wrong with name as a client.env key, and how
// to fix it; "" when it is fine.
func envNameProblem(name string) (problem, hint string) {
	switch {
	case !envNameRE.MatchString(name):
		return fmt.Sprintf("%q is not an environment variable name", name), "use letters, digits and _, not starting with a digit: CLAUDE_CODE_MAX_RETRIES"
	case slices.Contains(otlpEndpointVars, name):
		return name + " is set by retrylab for every external client: the run's own OTLP receiver",
			"the harness points OTEL_EXPORTER_OTLP_ENDPOINT and the _TRACES_, _LOGS_ and _METRICS_ENDPOINT at the run's receiver, which keeps the client's telemetry (otlp/) and checks it (selfReport); remove it (to pass one under another name, refer to it in a value: \"${OTEL_EXPORTER_OTLP_ENDPOINT}\"). OTEL_EXPORTER_OTLP_PROTOCOL, _HEADERS, _COMPRESSION and the OTEL_*_EXPORTER switches may be set (docs/chaos.md, External clients)"
	case strings.HasPrefix(name, "RETRYLAB_"), slices.Contains(reservedEnv, name):
		return name + " is set by retrylab for every external client", "the harness owns the base URLs, fake keys, RETRYLAB_* and the client's HOME and XDG folders (docs/chaos.md, External clients); to pass one under another name, refer to it in a value: OPENAI_API_BASE: \"${OPENAI_BASE_URL}\""
	}
	return "", ""
}

// scenarioEnv is client.env as NAME=value entries, ${NAME} in the values
// expanded from vars (expandHarness), sorted by name so the command line a
// run shows is stable.
func scenarioEnv(env map[string]string, vars map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+expandHarness(v, vars))
	}
	sort.Strings(out)
	return out
}

// toolchainEnv keeps language toolchains working under the client's empty
// HOME: where they keep their caches and installed toolchains by default
// under the user's home (Go's module and build caches, pip's user packages,
// npm's cache, rustup's toolchains), it names the user's folders
// explicitly, so that `go run`, `npx` or `cargo run` as a client neither
// rebuilds nor downloads everything in every scenario. Caches, not
// settings: an agent's own settings stay out of reach. Names already in
// env (the runner's environment) pass through as they are; home and
// cacheDir are the runner's home and cache folders ("" when unknown).
func toolchainEnv(env []string, home, cacheDir string) []string {
	have := map[string]bool{}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		have[name] = true
	}
	var out []string
	add := func(name, dir, sub string) {
		if !have[name] && dir != "" {
			out = append(out, name+"="+filepath.Join(dir, sub))
		}
	}
	add("GOPATH", home, "go")
	add("GOCACHE", cacheDir, "go-build")
	add("PYTHONUSERBASE", home, ".local")
	add("NPM_CONFIG_CACHE", home, ".npm")
	add("CARGO_HOME", home, ".cargo")
	add("RUSTUP_HOME", home, ".rustup")
	return out
}

// clientHomeDir is the client's own HOME inside its run folder.
const clientHomeDir = "home"

// clientHomeVars are the variables clientHome sets and the folders (inside
// the client's HOME, slash-separated) they name.
var clientHomeVars = []struct{ name, sub string }{
	{"HOME", ""},
	{"XDG_CONFIG_HOME", ".config"},
	{"XDG_CACHE_HOME", ".cache"},
	{"XDG_DATA_HOME", ".local/share"},
	{"XDG_STATE_HOME", ".local/state"},
	{"TMPDIR", "tmp"},
}

// clientHome makes an empty home folder for an external client inside its
// run folder dir, with the XDG base folders and a temporary folder in it,
// and returns the variables that point there. An agent thus reads no
// settings of the user's and writes none, and two scenarios (or a re-run)
// never share state. What the client leaves there is part of its run
// folder: never followed through links, scrubbed of keys (runfolder.go,
// redact.go).
func clientHome(dir string) ([]string, error) {
	home := filepath.Join(dir, clientHomeDir)
	env := make([]string, 0, len(clientHomeVars))
	for _, v := range clientHomeVars {
		p := filepath.Join(home, v.sub)
		if err := os.MkdirAll(p, 0o700); err != nil {
			return nil, fmt.Errorf("making the client's home: %w", err)
		}
		env = append(env, v.name+"="+p)
	}
	return env, nil
}

// harnessRefRE matches ${NAME} in client.command, client.env and
// client.home, and $${NAME}, which stands for a literal ${NAME}.
var harnessRefRE = regexp.MustCompile(`\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// isHarnessName reports whether the harness sets name for every external
// client (reservedEnv, otlpEndpointVars, RETRYLAB_*): the names ${NAME} may
// refer to.
func isHarnessName(name string) bool {
	return slices.Contains(reservedEnv, name) || slices.Contains(otlpEndpointVars, name) || strings.HasPrefix(name, "RETRYLAB_")
}

// expandHarness replaces each ${NAME} in s whose NAME the harness sets
// (isHarnessName) by its value in vars, and $${NAME} by ${NAME}. Other
// ${...} are left as they are, for a shell the command may start (sh -c
// '... ${PATH} ...'). So an agent configured on its command line or
// through a variable holding JSON (opencode's OPENCODE_CONFIG_CONTENT,
// Codex's -c model_providers...) can be pointed at the mock, whose URL is
// known only when the scenario runs, without a wrapper script.
func expandHarness(s string, vars map[string]string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return harnessRefRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := harnessRefRE.FindStringSubmatch(m)
		switch v, ok := vars[sub[2]]; {
		case sub[1] != "":
			return m[1:]
		case ok && isHarnessName(sub[2]):
			return v
		}
		return m
	})
}

// harnessVars is the harness's layer of an external client's environment
// (clientEnv, the telemetry endpoints, clientHome) as a map, for
// expandHarness.
func harnessVars(layers ...[]string) map[string]string {
	m := map[string]string{}
	for _, l := range layers {
		for _, kv := range l {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
	}
	return m
}

// quietHome are settings files written into every external client's empty
// HOME before it starts, for agents whose only off switch for usage
// statistics or update checks is a settings file: Qwen Code sends usage
// statistics to Alibaba Cloud's RUM service unless
// privacy.usageStatisticsEnabled is false in $HOME/.qwen/settings.json (its
// settings reference; there is no environment switch: QwenLogger.getInstance
// reads only the setting; measured: "RUM flush failed ... rum.aliyuncs.com"
// in its debug log without it). A scenario's client.home entry for the same
// path replaces the file.
var quietHome = map[string]string{
	".qwen/settings.json": `{"privacy": {"usageStatisticsEnabled": false}, "general": {"enableAutoUpdate": false}, "telemetry": {"enabled": false}}` + "\n",
}

// homeFileProblem says what is wrong with name as a client.home key (a
// path inside the client's HOME), and how to fix it; "" when it is fine.
// A folder the harness makes there (the XDG folders, TMPDIR, and the
// folders of quietHome's files) cannot be a file.
func homeFileProblem(name string) (problem, hint string) {
	if !filepath.IsLocal(name) || strings.Contains(name, `\`) || filepath.Clean(name) == "." {
		return fmt.Sprintf("%q is not a path inside the client's HOME", name), "write a relative path without .. (.qwen/settings.json, .config/opencode/opencode.json)"
	}
	if clean := filepath.ToSlash(filepath.Clean(name)); slices.Contains(harnessHomeFolders(), clean) || strings.HasSuffix(name, "/") {
		return fmt.Sprintf("%q is a folder (the harness makes it, or the path ends in /), not a file", name), "name a file inside it: .config/opencode/opencode.json, tmp/notes.txt"
	}
	return "", ""
}

// homeFilesConflict says which two of names (client.home's keys) cannot
// both be files because one is inside the other ("a" and "a/b"); "" none.
func homeFilesConflict(names []string) string {
	clean := make([]string, len(names))
	for i, n := range names {
		clean[i] = filepath.ToSlash(filepath.Clean(n))
	}
	slices.Sort(clean)
	for i := 1; i < len(clean); i++ {
		if clean[i] == clean[i-1] || strings.HasPrefix(clean[i], clean[i-1]+"/") {
			return fmt.Sprintf("%q and %q: a file cannot also be a folder", clean[i-1], clean[i])
		}
	}
	return ""
}

// harnessHomeFolders are the folders the harness makes in a client's HOME
// (clientHome's, quietHome's), and every folder above them, slash-separated.
func harnessHomeFolders() []string {
	var out []string
	add := func(p string) {
		for ; p != "." && p != "/" && p != ""; p = path.Dir(p) {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	for _, v := range clientHomeVars {
		add(v.sub)
	}
	for name := range quietHome {
		add(path.Dir(name))
	}
	return out
}

// writeHomeFiles writes quietHome and the scenario's client.home (its
// contents with ${NAME} expanded from vars) into the client's home folder
// home, which clientHome has just made, through WriteFileAtomic (a link
// found at a file's path is replaced, never written through).
func writeHomeFiles(home string, files map[string]string, vars map[string]string) error {
	all := map[string]string{}
	for name, content := range quietHome {
		all[name] = content
	}
	for name, content := range files {
		all[name] = expandHarness(content, vars)
	}
	names := slices.Sorted(maps.Keys(all))
	for _, name := range names {
		if p, _ := homeFileProblem(name); p != "" {
			return fmt.Errorf("client.home: %s", p)
		}
		p := filepath.Join(home, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return fmt.Errorf("writing the client's home: %w", err)
		}
		if err := WriteFileAtomic(p, []byte(all[name])); err != nil {
			return fmt.Errorf("writing the client's home: %w", err)
		}
	}
	return nil
}
