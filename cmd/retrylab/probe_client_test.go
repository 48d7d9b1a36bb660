package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProbeClientWire: --client FILE runs the client with the file's
// provider and model, as chaos run does (the probe told Codex CLI, an
// openai-responses client, to speak anthropic); --provider and --model
// still win, and a provider the probe has no battery for is exit 2.
func TestProbeClientWire(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	responses := write("codex.yaml", "provider: openai-responses\nmodel: gpt-5\nclient:\n  command: [sh, -c, 'exit 0']\n")
	bare := write("bare.yaml", "client:\n  command: [sh, -c, 'exit 0']\n")
	tests := []struct {
		name, file          string
		args                []string
		wantProv, wantModel string
		wantNote            bool
	}{
		{"the file's provider and model", responses, nil, "openai-responses", "gpt-5", false},
		{"--provider wins, the file's model is not for it", responses, []string{"--provider", "anthropic"}, "anthropic", "", true},
		{"--model wins", responses, []string{"--model", "gpt-4.1"}, "openai-responses", "gpt-4.1", false},
		{"a client block alone: the defaults", bare, nil, "anthropic", "claude-haiku-4-5", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseChaosProbe(append([]string{"--client", tt.file}, tt.args...), io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			c, err := loadProbeClient(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			if err := probeClientWire(&cfg, c, &stderr); err != nil {
				t.Fatal(err)
			}
			if cfg.providerName != tt.wantProv || cfg.model != tt.wantModel {
				t.Errorf("provider %q, model %q; want %q, %q", cfg.providerName, cfg.model, tt.wantProv, tt.wantModel)
			}
			if got := strings.Contains(stderr.String(), "not the provider of"); got != tt.wantNote {
				t.Errorf("stderr %q: note %t, want %t", stderr.String(), got, tt.wantNote)
			}
		})
	}
}
