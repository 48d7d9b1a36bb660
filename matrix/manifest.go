package matrix

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/yamldiag"
	"github.com/retrylab/retrylab/probe"
)

// Manifest is a matrix manifest: the clients `retrylab matrix` probes.
type Manifest struct {
	File    string
	Clients []Client
}

// Client is one client of the manifest: how to run it (as a scenario
// file's client block runs it) and how to tell its version.
type Client struct {
	// Name names the client's row and its folder in the output; letters,
	// digits, '.', '_' and '-' only.
	Name string
	// Version is the client's version as given, or "" when VersionCommand
	// (run with sh -c; its first line of output is the version) says it.
	Version        string
	VersionCommand string
	// Command is the client's argv (a list in the manifest), or, when the
	// manifest gives a string, Shell is set and Command is empty: it runs
	// with sh -c, as chaos probe --client-cmd runs it.
	Command []string
	Shell   string
	// Provider is the wire format (probe.ProviderNames) and Model the model
	// it is told ("" : the provider's).
	Provider, Model string
	Env             map[string]string
	Home            map[string]string
	InheritEnv      []string
	Requires        []string
	RequiresHint    string
	// Budget and Repeat, when set, are this client's chaos probe
	// --budget and --repeat (an agent whose retries outlast the default
	// ones needs more to be seen giving up); 0: the command's.
	Budget time.Duration
	Repeat int
	// StartGrace, when set, is this client's chaos probe --start-grace: a
	// client whose start-up (imports) outlasts the default when the
	// battery starts many copies at once; 0: the command's.
	StartGrace time.Duration
	// Line is the line of the client's entry in the manifest.
	Line int
}

// Limits of a manifest: it is read whole, and every client is a probe.
const (
	MaxManifestBytes = 1 << 20
	MaxClients       = 500
	maxNameLen       = 80
	maxVersionLen    = 120
)

var clientKeys = []string{"name", "version", "versionCommand", "command", "provider", "model", "env", "home", "inheritEnv", "requires", "requiresHint", "budget", "repeat", "startGrace"}

// Bounds of a client's budget and repeat (chaos probe's).
const (
	maxBudget = 24 * time.Hour
	maxRepeat = 1000
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// manifestHint is the hint for a problem with the whole file.
const manifestHint = "a manifest is `clients:` then a list of {name, version | versionCommand, command, provider, env, home}; see docs/matrix.md"

// ParseManifest reads a manifest. Every problem is reported at once, as a
// yamldiag.List: file:line:column, the key path, and a hint (a did-you-mean
// for a misspelt key or provider).
func ParseManifest(file string, data []byte) (*Manifest, error) {
	c := yamldiag.New(file)
	if len(data) > MaxManifestBytes {
		c.AddAt(0, 0, "", fmt.Sprintf("file is %d bytes, more than %d", len(data), MaxManifestBytes), "a manifest lists clients; split a larger one")
		return nil, c.List()
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			c.AddAt(0, 0, "", "empty manifest", manifestHint)
			return nil, c.List()
		}
		line, msg := yamldiag.Syntax(err)
		c.AddAt(line, 0, "", "not YAML: "+msg, "fix the YAML syntax at that line")
		return nil, c.List()
	}
	if len(doc.Content) == 0 {
		c.AddAt(0, 0, "", "empty manifest", manifestHint)
		return nil, c.List()
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		c.Addf(root, "", manifestHint, "the manifest is %s, not a mapping", yamldiag.KindName(root))
		return nil, c.List()
	}
	m := &Manifest{File: file}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "clients" {
			c.Addf(k, k.Value, didYouMean(k.Value, []string{"clients"}, "the manifest's one key is clients"), "unknown key %q", k.Value)
			continue
		}
		list = v
	}
	switch {
	case list == nil:
		c.AddAt(root.Line, root.Column, "clients", "no clients", manifestHint)
	case list.Kind != yaml.SequenceNode:
		c.Addf(list, "clients", manifestHint, "clients is %s, not a list", yamldiag.KindName(list))
	case len(list.Content) == 0:
		c.Add(list, "clients", "no clients", manifestHint)
	case len(list.Content) > MaxClients:
		c.Addf(list, "clients", "split the manifest", "%d clients, more than %d", len(list.Content), MaxClients)
	default:
		seen := map[string]int{}
		for i, n := range list.Content {
			cl, ok := decodeClient(c, fmt.Sprintf("clients[%d]", i), n)
			if !ok {
				continue
			}
			if at, dup := seen[cl.Name]; dup {
				c.Addf(n, fmt.Sprintf("clients[%d].name", i), "give each client a name of its own (e.g. with its version: claude-code-2.1)",
					"name %q is also the name of the client at line %d", cl.Name, at)
				continue
			}
			seen[cl.Name] = cl.Line
			m.Clients = append(m.Clients, cl)
		}
	}
	if l := c.List(); l != nil {
		return nil, l
	}
	return m, nil
}

func didYouMean(s string, known []string, otherwise string) string {
	if k := yamldiag.Closest(s, known); k != "" {
		return fmt.Sprintf("did you mean %q?", k)
	}
	return otherwise
}

// decodeClient reads one entry of clients; ok is false when it had a problem.
func decodeClient(c *yamldiag.Collector, path string, n *yaml.Node) (Client, bool) {
	before := c.Len()
	cl := Client{Line: n.Line}
	if n.Kind != yaml.MappingNode {
		c.Addf(n, path, "each client is a mapping: {name, version, command, provider}", "%s, not a mapping", yamldiag.KindName(n))
		return cl, false
	}
	seen := map[string]bool{}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := path + "." + k.Value
		if seen[k.Value] {
			c.Addf(k, field, "give each key once", "key %q given twice", k.Value)
			continue
		}
		seen[k.Value] = true
		switch k.Value {
		case "name":
			cl.Name = scalar(c, field, v)
			if cl.Name != "" && (!nameRE.MatchString(cl.Name) || len(cl.Name) > maxNameLen) {
				c.Addf(v, field, fmt.Sprintf("use letters, digits, '.', '_' and '-' (at most %d): it names the client's folder", maxNameLen), "bad name %q", cl.Name)
			}
		case "version":
			cl.Version = scalar(c, field, v)
			if len(cl.Version) > maxVersionLen || strings.ContainsAny(cl.Version, "\n\r") {
				c.Addf(v, field, fmt.Sprintf("one line of at most %d characters", maxVersionLen), "bad version")
			}
		case "versionCommand":
			cl.VersionCommand = scalar(c, field, v)
		case "command":
			switch v.Kind {
			case yaml.ScalarNode:
				cl.Shell = v.Value
				if strings.TrimSpace(cl.Shell) == "" {
					c.Add(v, field, "empty command", "give the command that runs the client")
				}
			case yaml.SequenceNode:
				cl.Command = strings_(c, field, v)
				if len(v.Content) == 0 {
					c.Add(v, field, "empty command", "give the command that runs the client, e.g. [node, client.mjs]")
				}
			default:
				c.Addf(v, field, "a string (run with sh -c) or a list (argv)", "command is %s", yamldiag.KindName(v))
			}
		case "provider":
			cl.Provider = scalar(c, field, v)
			if cl.Provider != "" {
				if _, err := probe.LookupProvider(cl.Provider); err != nil {
					c.Addf(v, field, didYouMean(cl.Provider, probe.ProviderNames(), "one of "+strings.Join(probe.ProviderNames(), ", ")), "unknown provider %q", cl.Provider)
				}
			}
		case "model":
			cl.Model = scalar(c, field, v)
		case "env":
			cl.Env = stringMap(c, field, v)
			for _, name := range slices.Sorted(maps.Keys(cl.Env)) {
				if problem, hint := scenario.EnvProblem(name, cl.Env[name]); problem != "" {
					c.Add(v, field+"."+name, problem, hint)
				}
			}
		case "home":
			cl.Home = stringMap(c, field, v)
			for _, p := range slices.Sorted(maps.Keys(cl.Home)) {
				if p == "" || strings.HasPrefix(p, "/") || slices.Contains(strings.Split(p, "/"), "..") {
					c.Addf(v, field, "a path inside the client's HOME, e.g. .qwen/settings.json", "bad path %q", p)
				} else if problem, hint := scenario.HomeFileProblem(p); problem != "" {
					c.Add(v, field+"."+p, problem, hint)
				}
			}
		case "inheritEnv":
			cl.InheritEnv = strings_(c, field, v)
			for i, name := range cl.InheritEnv {
				if problem, hint := scenario.InheritEnvProblem(name); problem != "" {
					c.Add(v, fmt.Sprintf("%s[%d]", field, i), problem, hint)
				}
			}
		case "requires":
			cl.Requires = strings_(c, field, v)
		case "requiresHint":
			cl.RequiresHint = scalar(c, field, v)
		case "budget":
			d, err := time.ParseDuration(scalar(c, field, v))
			if err != nil || d < time.Second || d > maxBudget {
				c.Addf(v, field, fmt.Sprintf("a duration from 1s to %s, e.g. 4m", maxBudget), "bad budget %q", v.Value)
			}
			cl.Budget = d
		case "startGrace":
			d, err := time.ParseDuration(scalar(c, field, v))
			if err != nil || d < time.Second || d > maxBudget {
				c.Addf(v, field, fmt.Sprintf("a duration from 1s to %s, e.g. 2m", maxBudget), "bad startGrace %q", v.Value)
			}
			cl.StartGrace = d
		case "repeat":
			n, err := strconv.Atoi(scalar(c, field, v))
			if err != nil || n < 1 || n > maxRepeat {
				c.Addf(v, field, fmt.Sprintf("a count from 1 to %d: the failures each exhaustion run serves", maxRepeat), "bad repeat %q", v.Value)
			}
			cl.Repeat = n
		default:
			c.Addf(k, field, didYouMean(k.Value, clientKeys, "known keys: "+strings.Join(clientKeys, ", ")), "unknown key %q", k.Value)
			if s := yamldiag.Closest(k.Value, clientKeys); s != "" {
				// A misspelt key is one problem, not two: its
				// did-you-mean says what is missing.
				seen[s] = true
				ok = false
			}
		}
	}
	if cl.Name == "" && !seen["name"] {
		c.Add(n, path+".name", "no name", "give the client's name, e.g. name: anthropic-go")
	}
	switch {
	case seen["version"] && seen["versionCommand"]:
		c.Add(n, path, "both version and versionCommand", "give one: version as it is, or versionCommand that prints it")
	case !seen["version"] && !seen["versionCommand"]:
		c.Add(n, path+".version", "no version", "give version: 1.2.3, or versionCommand: a command that prints it (resumption and drift compare versions)")
	case seen["version"] && cl.Version == "":
		c.Add(n, path+".version", "empty version", "give the client's version")
	case seen["versionCommand"] && strings.TrimSpace(cl.VersionCommand) == "":
		c.Add(n, path+".versionCommand", "empty versionCommand", "give a command that prints the version")
	}
	if !seen["command"] {
		c.Add(n, path+".command", "no command", "give the command that runs the client, e.g. command: [node, client.mjs]")
	}
	if !seen["provider"] {
		c.Add(n, path+".provider", "no provider", "give the wire format it speaks: "+strings.Join(probe.ProviderNames(), ", "))
	}
	return cl, ok && c.Len() == before
}

func scalar(c *yamldiag.Collector, field string, v *yaml.Node) string {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		c.Addf(v, field, "give a string", "%s, not a string", yamldiag.KindName(v))
		return ""
	}
	return v.Value
}

func strings_(c *yamldiag.Collector, field string, v *yaml.Node) []string {
	if v.Kind != yaml.SequenceNode {
		c.Addf(v, field, "give a list of strings", "%s, not a list", yamldiag.KindName(v))
		return nil
	}
	out := make([]string, 0, len(v.Content))
	for i, e := range v.Content {
		out = append(out, scalar(c, fmt.Sprintf("%s[%d]", field, i), e))
	}
	return out
}

func stringMap(c *yamldiag.Collector, field string, v *yaml.Node) map[string]string {
	if v.Kind != yaml.MappingNode {
		c.Addf(v, field, "give a mapping of names to strings", "%s, not a mapping", yamldiag.KindName(v))
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		out[k.Value] = scalar(c, field+"."+k.Value, val)
	}
	return out
}
