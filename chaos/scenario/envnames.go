package scenario

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/retrylab/retrylab/internal/wire"
)

// ReservedEnv are the names the harness sets for every external client:
// the wire formats' base-URL and key variables (wire.ClientVars), the
// client's HOME, TMPDIR and XDG folders; client.env may not name them (nor
// any RETRYLAB_ name).
var ReservedEnv = append(wire.ClientVars(),
	"HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "TMPDIR")

// OTLPEndpointVars are the OTLP endpoints the harness points at the run's
// own receiver (chaos/telemetry.go), all alike: client.env may not name one.
var OTLPEndpointVars = []string{"OTEL_EXPORTER_OTLP_ENDPOINT",
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
	if slices.Contains(OTLPProtocolVars, name) && !slices.Contains(OTLPHTTPProtocols, value) {
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
	case slices.Contains(OTLPEndpointVars, name):
		return name + " is set by retrylab for every external client: the run's own OTLP receiver",
			"the harness points OTEL_EXPORTER_OTLP_ENDPOINT and the _TRACES_, _LOGS_ and _METRICS_ENDPOINT at the run's receiver, which keeps the client's telemetry (otlp/) and checks it (selfReport); remove it (to pass one under another name, refer to it in a value: \"${OTEL_EXPORTER_OTLP_ENDPOINT}\"). OTEL_EXPORTER_OTLP_PROTOCOL, _HEADERS, _COMPRESSION and the OTEL_*_EXPORTER switches may be set (docs/chaos.md, External clients)"
	case strings.HasPrefix(name, "RETRYLAB_"), slices.Contains(ReservedEnv, name):
		return name + " is set by retrylab for every external client", "the harness owns the base URLs, fake keys, RETRYLAB_* and the client's HOME and XDG folders (docs/chaos.md, External clients); to pass one under another name, refer to it in a value: OPENAI_API_BASE: \"${OPENAI_BASE_URL}\""
	}
	return "", ""
}

// InheritEnvProblem says what is wrong with name as a variable of the
// runner's environment to pass on to external clients (client.inheritEnv,
// --inherit-env), and how to fix it; "" when it is fine. A name the
// harness sets for every client cannot be passed: the harness's value
// would win anyway.
func InheritEnvProblem(name string) (problem, hint string) {
	switch {
	case !envNameRE.MatchString(name):
		hint := "write the name alone, letters, digits and _, not starting with a digit: AWS_PROFILE"
		if n, _, ok := strings.Cut(name, "="); ok && envNameRE.MatchString(n) {
			hint = "inheritEnv passes the runner's own value of a name; to give a value, write it in client.env: {" + n + ": ...}"
		}
		return fmt.Sprintf("%q is not an environment variable name", name), hint
	case strings.HasPrefix(name, "RETRYLAB_"), slices.Contains(ReservedEnv, name), slices.Contains(OTLPEndpointVars, name):
		return name + " is set by retrylab for every external client",
			"the harness's own value (base URLs, fake keys, RETRYLAB_*, HOME, TMPDIR, the XDG folders, the OTLP endpoints) is what the client must get: remove it (docs/chaos.md, External clients)"
	}
	return "", ""
}

// HomeFileProblem says what is wrong with name as a client.home key (a
// path inside the client's HOME), and how to fix it; "" when it is fine.
// A folder the harness makes there (the XDG folders, TMPDIR, and the
// folders of QuietHome's files) cannot be a file.
func HomeFileProblem(name string) (problem, hint string) {
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

// OTLPProtocolVars choose an OTLP exporter's protocol: first the general
// one, then each signal's, which wins over it for its signal.
var OTLPProtocolVars = []string{"OTEL_EXPORTER_OTLP_PROTOCOL",
	"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"}

// OTLPHTTPProtocols are the protocols the run's receiver speaks.
var OTLPHTTPProtocols = []string{"http/protobuf", "http/json"}

// ClientHomeVars are the variables ClientHome sets and the folders (inside
// the client's HOME, slash-separated) they name.
var ClientHomeVars = []struct{ Name, Sub string }{
	{"HOME", ""},
	{"XDG_CONFIG_HOME", ".config"},
	{"XDG_CACHE_HOME", ".cache"},
	{"XDG_DATA_HOME", ".local/share"},
	{"XDG_STATE_HOME", ".local/state"},
	{"TMPDIR", "tmp"},
}

// QuietHome are settings files written into every external client's empty
// HOME before it starts, for agents whose only off switch for usage
// statistics or update checks is a settings file: Qwen Code sends usage
// statistics to Alibaba Cloud's RUM service unless
// privacy.usageStatisticsEnabled is false in $HOME/.qwen/settings.json (its
// settings reference; there is no environment switch: QwenLogger.getInstance
// reads only the setting; measured: "RUM flush failed ... rum.aliyuncs.com"
// in its debug log without it). Gemini CLI, which Qwen Code forks, sends
// its usage statistics to Google (Clearcut) unless the same setting is
// false in $HOME/.gemini/settings.json (0.61.0: the config takes
// usageStatisticsEnabled from settings.privacy only), and checks for
// updates unless general.enableAutoUpdate and
// general.enableAutoUpdateNotification are false. A scenario's client.home
// entry for the same path replaces the file.
var QuietHome = map[string]string{
	".gemini/settings.json": `{"privacy": {"usageStatisticsEnabled": false}, "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}}` + "\n",
	".qwen/settings.json":   `{"privacy": {"usageStatisticsEnabled": false}, "general": {"enableAutoUpdate": false}, "telemetry": {"enabled": false}}` + "\n",
}

// harnessHomeFolders are the folders the harness makes in a client's HOME
// (ClientHome's, QuietHome's), and every folder above them, slash-separated.
func harnessHomeFolders() []string {
	var out []string
	add := func(p string) {
		for ; p != "." && p != "/" && p != ""; p = path.Dir(p) {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	for _, v := range ClientHomeVars {
		add(v.Sub)
	}
	for name := range QuietHome {
		add(path.Dir(name))
	}
	return out
}

// EnvProblem says what is wrong with name=value as a client.env entry (a
// scenario's, or a matrix manifest's client's env), and how to fix it; ""
// when it is fine.
func EnvProblem(name, value string) (problem, hint string) { return envProblem(name, value) }
