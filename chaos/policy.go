package chaos

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/retrylab/retrylab/retry"
	"go.yaml.in/yaml/v3"
)

// PolicyFor resolves a scenario's client.policy: a preset name or an inline
// mapping; absent, the official SDK preset of the scenario's provider
// (anthropic-sdk or openai-sdk), which is what an agent gets by default.
func PolicyFor(sc *Scenario) (*retry.Policy, error) {
	if sc.Client.Policy.Kind == 0 {
		return retry.Preset(sc.Provider + "-sdk")
	}
	if path, ok := PolicyPath(sc); ok {
		return retry.LoadPolicyFile(path)
	}
	return retry.DecodePolicyNode(&sc.Client.Policy, sc.File)
}

// PolicyPath returns the policy file a scenario's client.policy names, if
// it names one: a string holding a path separator or ending .yaml, .yml or
// .json (preset names have neither). A relative path is relative to the
// scenario file's folder, so a suite can be run from anywhere.
func PolicyPath(sc *Scenario) (string, bool) {
	n := &sc.Client.Policy
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode || !isPolicyPath(n.Value) {
		return "", false
	}
	p := n.Value
	if !filepath.IsAbs(p) && sc.File != "" {
		p = filepath.Join(filepath.Dir(sc.File), p)
	}
	return p, true
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

// envelopeFor returns the policy's envelope as an EnvelopeFunc.
func envelopeFor(sc *Scenario) (EnvelopeFunc, error) {
	if !sc.Expect.Delays.Policy {
		return nil, nil
	}
	p, err := PolicyFor(sc)
	if err != nil {
		return nil, err
	}
	return func(ft string, attempt int, ra time.Duration, has bool) (time.Duration, time.Duration, bool) {
		return p.Envelope(retry.FailureType(ft), attempt, ra, has)
	}, nil
}
