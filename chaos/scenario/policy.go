package scenario

import (
	"errors"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/policyfile"
	"github.com/retrylab/retrylab/retry/preset"
)

// ClientPolicy is a scenario's client.policy: a preset name, the path of a
// policy file (relative to the scenario file's folder) or an inline policy
// mapping. LoadScenario decodes it once, at load, reporting its problems
// with the scenario's; PolicyFor returns what it decoded. The zero value
// is "not given": the provider's SDK preset.
type ClientPolicy struct {
	path   string        // the policy file it names, resolved; "" for none
	policy *retry.Policy // decoded; nil when not given
}

// Encode sets the policy from a Go value written as a scenario file would
// write it: a preset name, a policy file's path (relative to the current
// folder) or a map of policy fields. It is for scenarios built in code; a
// scenario file's policy is set by LoadScenario.
func (cp *ClientPolicy) Encode(v any) error {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return err
	}
	p, err := decodeClientPolicy(&n, "")
	if err != nil {
		return err
	}
	*cp = p
	return nil
}

// decodeClientPolicy decodes the client.policy node n of the scenario file
// file; an error is a *policyfile.Error.
func decodeClientPolicy(n *yaml.Node, file string) (ClientPolicy, error) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if path, ok := policyPath(n, file); ok {
		p, err := policyfile.Load(path)
		return ClientPolicy{path: path, policy: p}, err
	}
	p, err := policyfile.DecodeNode(n, file)
	return ClientPolicy{policy: p}, err
}

// policyPath returns the policy file the client.policy node n of the
// scenario file file names, if it names one: a string holding a path
// separator or ending .yaml, .yml or .json (preset names have neither),
// relative to the scenario file's folder, so a suite can be run from
// anywhere.
func policyPath(n *yaml.Node, file string) (string, bool) {
	if n.Kind != yaml.ScalarNode || !isPolicyPath(n.Value) {
		return "", false
	}
	p := n.Value
	if !filepath.IsAbs(p) && file != "" {
		p = filepath.Join(filepath.Dir(file), p)
	}
	return p, true
}

// resolvePolicy decodes client.policy (node n) into sc.Client.Policy,
// reporting each of its problems at its own place: the problems of an
// inline policy where they are, those of a policy file at client.policy,
// naming the file and the place in it.
func (d *decoder) resolvePolicy(n *yaml.Node, sc *Scenario) {
	cp, err := decodeClientPolicy(n, d.file)
	if err == nil {
		sc.Client.Policy = cp
		return
	}
	var pe *policyfile.Error
	switch {
	case !errors.As(err, &pe):
		d.c.Add(n, "client.policy", err.Error(), "use a preset name or an inline policy mapping; see docs/policy.md")
	case cp.path != "":
		for _, p := range pe.Problems() {
			hint := p.Hint
			if hint == "" {
				hint = "client.policy names a policy file, relative to the scenario file's folder; see docs/policy.md"
			}
			d.c.Add(n, "client.policy", "policy file "+p.Error(), hint)
		}
	default:
		for _, p := range pe.Problems() {
			field := "client.policy"
			if p.Field != "" && p.Field != "policy" {
				field += "." + p.Field
			}
			line, col := p.Line, p.Column
			if line == 0 {
				line, col = n.Line, n.Column
			}
			d.c.AddAt(line, col, field, p.Msg, p.Hint)
		}
	}
}

// PolicyFor returns a scenario's policy: client.policy as LoadScenario (or
// ClientPolicy.Encode) decoded it, a preset name, a policy file or an
// inline mapping; absent, the official SDK preset of the scenario's
// provider (anthropic-sdk or openai-sdk), which is what an agent gets by
// default. The policy returned is shared: callers do not change it.
func PolicyFor(sc *Scenario) (*retry.Policy, error) {
	if p := sc.Client.Policy.policy; p != nil {
		return p, nil
	}
	return preset.Get(wire.SDKPreset(sc.Provider))
}

// policyFile returns the policy file a scenario's client.policy names, if
// it names one: a string holding a path separator or ending .yaml, .yml or
// .json (preset names have neither). A relative path is relative to the
// scenario file's folder, so a suite can be run from anywhere.
func policyFile(sc *Scenario) (string, bool) {
	return sc.Client.Policy.path, sc.Client.Policy.path != ""
}

func isPolicyPath(v string) bool {
	if strings.ContainsAny(v, `/\`) {
		return true
	}
	switch strings.ToLower(filepath.Ext(v)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}
