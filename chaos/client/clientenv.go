package client

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// An external client's environment is built in layers, later ones winning
// (os/exec keeps the last value of a name):
//
//  1. what it takes of the runner's environment: only the names of an
//     allowlist (BaseEnv: passedEnv, passedPrefixes, toolchainVars), never
//     the rest, whatever it holds (a provider's key, cloud credentials,
//     tokens, an agent's settings folder, SSH_AUTH_SOCK);
//  2. toolchainEnv, the toolchains' caches under the user's home;
//  3. QuietEnv, the switches that keep agents off the internet (update
//     checks, telemetry, error reports);
//  4. the runner's variables the scenario asks for by name
//     (client.inheritEnv, --inherit-env: InheritedEnv);
//  5. client.env, the scenario's own variables;
//  6. the harness's variables (clientEnv, ClientHome, telemetry.env): base
//     URLs, fake keys, RETRYLAB_*, HOME, TMPDIR and the XDG folders, the
//     OTLP endpoints. A scenario cannot set them: the loader rejects
//     client.env entries and inheritEnv names that name one (ReservedEnv,
//     OTLPEndpointVars), so nothing is overridden silently. The OTLP
//     protocol variables are set here only where client.env leaves them out
//     (protocolEnv); client.env may set them to an OTLP/HTTP protocol,
//     nothing else (envProblem).
//
// client.env and client.inheritEnv may override a quiet switch; they may
// not both name one variable (the loader says so).

// QuietEnv switches off what coding agents do beside the answer when run
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
//
// Kilo CLI (github.com/Kilo-Org/kilocode, an opencode fork that renamed
// OPENCODE_ to KILO_): packages/opencode/src/flag/flag.ts
// (KILO_DISABLE_AUTOUPDATE, KILO_DISABLE_MODELS_FETCH,
// KILO_DISABLE_LSP_DOWNLOAD), packages/kilo-telemetry/src/telemetry.ts
// (KILO_TELEMETRY_LEVEL: PostHog is on only when it says "all") and
// packages/opencode/src/kilo-sessions/kilo-sessions.ts (KILO_DISABLE_SHARE,
// KILO_DISABLE_SESSION_INGEST: its session upload to Kilo's cloud).
// Continue's cn (github.com/continuedev/continue, extensions/cli):
// src/telemetry/posthogService.ts (CONTINUE_TELEMETRY_ENABLED=0, and the
// older CONTINUE_ALLOW_ANONYMOUS_TELEMETRY=0, switch PostHog off) and
// src/telemetry/telemetryService.ts (CONTINUE_CLI_ENABLE_TELEMETRY=0: its
// OpenTelemetry metrics, which start whenever an OTLP endpoint is set, as
// the harness sets one, and then print to the console, into stdout, unless
// OTEL_METRICS_EXPORTER says otlp; a scenario that wants them sets both in
// client.env). aider's options reference
// (github.com/Aider-AI/aider, aider/website/docs/config/options.md: every
// option has an AIDER_ variable): AIDER_ANALYTICS (--no-analytics),
// AIDER_CHECK_UPDATE (--no-check-update), AIDER_SHOW_RELEASE_NOTES.
//
// Codex CLI has no environment switch for its analytics (none in the
// 0.171.0 binary but CODEX_HOME and the like): its scenarios pass -c
// analytics.enabled=false (docs/agents.md). Gemini CLI's usage statistics
// and Qwen Code's have none either (Gemini CLI 0.61.0 reads only
// settings.privacy.usageStatisticsEnabled; GEMINI_TELEMETRY_ENABLED is its
// OpenTelemetry, off unless asked for): QuietHome switches them off in
// their settings files.
var QuietEnv = []string{
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
	"KILO_TELEMETRY_LEVEL=off",
	"KILO_DISABLE_AUTOUPDATE=1",
	"KILO_DISABLE_MODELS_FETCH=1",
	"KILO_DISABLE_LSP_DOWNLOAD=1",
	"KILO_DISABLE_SHARE=1",
	"KILO_DISABLE_SESSION_INGEST=1",
	"CONTINUE_TELEMETRY_ENABLED=0",
	"CONTINUE_ALLOW_ANONYMOUS_TELEMETRY=0",
	"CONTINUE_CLI_ENABLE_TELEMETRY=0",
	"AIDER_ANALYTICS=false",
	"AIDER_CHECK_UPDATE=false",
	"AIDER_SHOW_RELEASE_NOTES=false",
	"NO_COLOR=1",
}

// passedEnv are the names of the runner's environment every external
// client gets as they are: where programs are found (PATH), who the user
// is and their shell (USER, LOGNAME, SHELL: agents start their tools with
// it), the locale and time zone (LANG, LANGUAGE, TZ, and passedPrefixes'
// LC_*), and the terminal's type (TERM, for programs that look it up; not
// COLORTERM: a client's output goes to files, and NO_COLOR=1 is set).
var passedEnv = []string{"PATH", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM"}

// passedPrefixes begin names of the runner's environment every external
// client gets: the locale's categories (LC_ALL, LC_CTYPE, ...).
var passedPrefixes = []string{"LC_"}

// toolchainVars are the runner's toolchain settings an external client
// gets as they are, so that `go run`, node, npx, a virtualenv's python or
// `cargo run` work offline under the client's empty HOME as they do for
// the user: where Go, its modules and build cache are and how it builds
// (GOFLAGS, GOTOOLCHAIN), npm's cache, Python's user base and virtualenv,
// Rust's folders, and the roots of the version managers whose shims are
// in PATH (Volta, pyenv, asdf, mise). Folders and versions, never a
// credential: GOPROXY (which may hold one in its URL) and the like are
// not passed; a client that needs one names it in client.inheritEnv.
// toolchainEnv fills in the caches the runner's environment leaves unset.
var toolchainVars = []string{
	"GOROOT", "GOPATH", "GOMODCACHE", "GOCACHE", "GOFLAGS", "GOTOOLCHAIN",
	"NPM_CONFIG_CACHE",
	"PYTHONUSERBASE", "VIRTUAL_ENV",
	"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN",
	"VOLTA_HOME", "PYENV_ROOT", "ASDF_DIR", "ASDF_DATA_DIR", "MISE_DATA_DIR",
}

// BaseEnv is what an external client takes of env (the runner's
// environment, os.Environ()) without being asked: the names of passedEnv,
// passedPrefixes and toolchainVars, in env's order. Everything else stays
// out.
func BaseEnv(env []string) []string {
	out := make([]string, 0, len(passedEnv)+len(toolchainVars))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(passedEnv, name) || slices.Contains(toolchainVars, name) ||
			slices.ContainsFunc(passedPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			out = append(out, kv)
		}
	}
	return out
}

// InheritedEnv is what an external client takes of env (the runner's
// environment) because it was asked for by name (client.inheritEnv,
// --inherit-env): the entries of env named in names, in names' order, and
// the names env does not hold (missing), which the client does not get at
// all (not even empty). A name InheritEnvProblem rejects (the loader and
// the CLI do) is left out: the harness's own value must be the only one.
func InheritedEnv(env []string, names []string) (out, missing []string) {
	m := map[string]string{}
	for _, kv := range env {
		name, v, _ := strings.Cut(kv, "=")
		m[name] = v
	}
	for _, name := range names {
		if p, _ := scenario.InheritEnvProblem(name); p != "" {
			continue
		}
		if v, ok := m[name]; ok {
			out = append(out, name+"="+v)
		} else {
			missing = append(missing, name)
		}
	}
	return out, missing
}

// InheritNames is the names an external client of sc inherits from the
// runner's environment: client.inheritEnv, then extra (--inherit-env)
// not already in it.
func InheritNames(sc *scenario.Scenario, extra []string) []string {
	out := slices.Clone(sc.Client.InheritEnv)
	for _, n := range extra {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// ScenarioEnv is client.env as NAME=value entries, ${NAME} in the values
// expanded from vars (ExpandHarness), sorted by name so the command line a
// run shows is stable.
func ScenarioEnv(env map[string]string, vars map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+ExpandHarness(v, vars))
	}
	sort.Strings(out)
	return out
}

// ToolchainEnv keeps language toolchains working under the client's empty
// HOME: where they keep their caches and installed toolchains by default
// under the user's home (Go's module and build caches, pip's user packages,
// npm's cache, rustup's toolchains), it names the user's folders
// explicitly, so that `go run`, `npx` or `cargo run` as a client neither
// rebuilds nor downloads everything in every scenario. Caches, not
// settings: an agent's own settings stay out of reach. Names already in
// env (what the client takes of the runner's environment, BaseEnv, whose
// toolchainVars hold them all) pass through as they are; home and cacheDir
// are the runner's home and cache folders ("" when unknown).
func ToolchainEnv(env []string, home, cacheDir string) []string {
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

// ClientHomeDir is the client's own HOME inside its run folder.
const ClientHomeDir = "home"

// ClientHome makes an empty home folder for an external client inside its
// run folder dir, with the XDG base folders and a temporary folder in it,
// and returns the variables that point there. An agent thus reads no
// settings of the user's and writes none, and two scenarios (or a re-run)
// never share state. What the client leaves there is part of its run
// folder: never followed through links, scrubbed of keys (runfolder/runfolder.go,
// redact/redact.go).
func ClientHome(dir string) ([]string, error) {
	home := filepath.Join(dir, ClientHomeDir)
	env := make([]string, 0, len(scenario.ClientHomeVars))
	for _, v := range scenario.ClientHomeVars {
		p := filepath.Join(home, v.Sub)
		if err := os.MkdirAll(p, 0o700); err != nil {
			return nil, fmt.Errorf("making the client's home: %w", err)
		}
		env = append(env, v.Name+"="+p)
	}
	return env, nil
}

// harnessRefRE matches ${NAME} in client.command, client.env and
// client.home, and $${NAME}, which stands for a literal ${NAME}.
var harnessRefRE = regexp.MustCompile(`\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// isHarnessName reports whether the harness sets name for every external
// client (ReservedEnv, OTLPEndpointVars, RETRYLAB_*): the names ${NAME} may
// refer to.
func isHarnessName(name string) bool {
	return slices.Contains(scenario.ReservedEnv, name) || slices.Contains(scenario.OTLPEndpointVars, name) || strings.HasPrefix(name, "RETRYLAB_")
}

// ExpandHarness replaces each ${NAME} in s whose NAME the harness sets
// (isHarnessName) by its value in vars, and $${NAME} by ${NAME}. Other
// ${...} are left as they are, for a shell the command may start (sh -c
// '... ${PATH} ...'). So an agent configured on its command line or
// through a variable holding JSON (opencode's OPENCODE_CONFIG_CONTENT,
// Codex's -c model_providers...) can be pointed at the mock, whose URL is
// known only when the scenario runs, without a wrapper script.
func ExpandHarness(s string, vars map[string]string) string {
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

// HarnessVars is the harness's layer of an external client's environment
// (clientEnv, the telemetry endpoints, ClientHome) as a map, for
// ExpandHarness.
func HarnessVars(layers ...[]string) map[string]string {
	m := map[string]string{}
	for _, l := range layers {
		for _, kv := range l {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
	}
	return m
}

// WriteHomeFiles writes QuietHome and the scenario's client.home (its
// contents with ${NAME} expanded from vars) into the client's home folder
// home, which ClientHome has just made, through WriteFileAtomic (a link
// found at a file's path is replaced, never written through).
func WriteHomeFiles(home string, files map[string]string, vars map[string]string) error {
	all := map[string]string{}
	for name, content := range scenario.QuietHome {
		all[name] = content
	}
	for name, content := range files {
		all[name] = ExpandHarness(content, vars)
	}
	names := slices.Sorted(maps.Keys(all))
	for _, name := range names {
		if p, _ := scenario.HomeFileProblem(name); p != "" {
			return fmt.Errorf("client.home: %s", p)
		}
		p := filepath.Join(home, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return fmt.Errorf("writing the client's home: %w", err)
		}
		if err := runfolder.WriteFileAtomic(p, []byte(all[name])); err != nil {
			return fmt.Errorf("writing the client's home: %w", err)
		}
	}
	return nil
}
