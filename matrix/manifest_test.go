package matrix

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// golden compares got with testdata/name, or writes it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from what was rendered (go test ./matrix -update to accept):\n--- got:\n%s", path, got)
	}
}

const goodClient = "  - {name: a, version: '1', command: [x], provider: anthropic}\n"

// TestManifestErrors: every bad manifest is refused with file:line:column,
// the key path and a hint; the texts are in testdata/manifest-errors.golden.
func TestManifestErrors(t *testing.T) {
	cases := []struct{ name, in string }{
		{"empty", ""},
		{"not yaml", "clients: [\n"},
		{"not a mapping", "- a\n"},
		{"unknown top key", "client:\n" + goodClient},
		{"no clients", "clients: []\n"},
		{"clients not a list", "clients: {a: 1}\n"},
		{"client not a mapping", "clients:\n  - x\n"},
		{"misspelt key", "clients:\n  - {name: a, version: '1', comand: [x], provider: anthropic}\n"},
		{"unknown provider", "clients:\n  - {name: a, version: '1', command: [x], provider: antropic}\n"},
		{"missing everything", "clients:\n  - {}\n"},
		{"both versions", "clients:\n  - {name: a, version: '1', versionCommand: v, command: x, provider: openai}\n"},
		{"bad name", "clients:\n  - {name: ../etc, version: '1', command: x, provider: openai}\n"},
		{"duplicate name", "clients:\n" + goodClient + goodClient},
		{"empty command", "clients:\n  - {name: a, version: '1', command: [], provider: openai}\n"},
		{"command a mapping", "clients:\n  - {name: a, version: '1', command: {a: 1}, provider: openai}\n"},
		{"env not a mapping", "clients:\n  - {name: a, version: '1', command: x, provider: openai, env: [A]}\n"},
		{"env value a list", "clients:\n  - {name: a, version: '1', command: x, provider: openai, env: {A: [1]}}\n"},
		{"home escapes", "clients:\n  - {name: a, version: '1', command: x, provider: openai, home: {../.bashrc: x}}\n"},
		{"reserved env", "clients:\n  - {name: a, version: '1', command: x, provider: openai, env: {ANTHROPIC_BASE_URL: x, 1A: y}}\n"},
		{"reserved inheritEnv", "clients:\n  - {name: a, version: '1', command: x, provider: openai, inheritEnv: [HOME]}\n"},
		{"bad budget", "clients:\n  - {name: a, version: '1', command: x, provider: openai, budget: 5, repeat: 0, startGrace: 0s}\n"},
		{"key twice", "clients:\n  - {name: a, name: b, version: '1', command: x, provider: openai}\n"},
		{"version two lines", "clients:\n  - {name: a, version: \"1\\n2\", command: x, provider: openai}\n"},
	}
	var b strings.Builder
	for _, c := range cases {
		_, err := ParseManifest("m.yaml", []byte(c.in))
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !strings.HasPrefix(err.Error(), "m.yaml") {
			t.Errorf("%s: %q does not name the file", c.name, err)
		}
		b.WriteString("== " + c.name + "\n" + err.Error() + "\n")
		if l, ok := err.(interface{ Hint(string) string }); ok {
			b.WriteString("hint: " + l.Hint("fix them") + "\n")
		}
	}
	golden(t, "manifest-errors.golden", []byte(b.String()))
}

func TestManifestGood(t *testing.T) {
	in := `clients:
  - name: claude-code-2.1
    versionCommand: "claude --version"
    command: "claude -p hi"
    provider: anthropic
    model: claude-sonnet-4-5
    env: {CLAUDE_CODE_MAX_RETRIES: "3"}
    home: {.claude/settings.json: "{}"}
  - name: openai-go
    version: v3.96.0
    command: [bin/openai, --flag]
    provider: openai
    requires: [bin/openai]
    budget: 4m
    repeat: 11
    startGrace: 2m
`
	m, err := ParseManifest("m.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Clients) != 2 {
		t.Fatalf("%d clients", len(m.Clients))
	}
	a, b := m.Clients[0], m.Clients[1]
	if a.Shell != "claude -p hi" || a.VersionCommand != "claude --version" || a.Env["CLAUDE_CODE_MAX_RETRIES"] != "3" ||
		a.Home[".claude/settings.json"] != "{}" || a.Model != "claude-sonnet-4-5" || a.Line != 2 {
		t.Errorf("first client: %+v", a)
	}
	if len(b.Command) != 2 || b.Version != "v3.96.0" || b.Provider != "openai" || b.Requires[0] != "bin/openai" || b.Budget != 4*time.Minute || b.Repeat != 11 || b.StartGrace != 2*time.Minute {
		t.Errorf("second client: %+v", b)
	}
}

// TestPublishedManifest: docs/matrix/manifest.yaml parses.
func TestPublishedManifest(t *testing.T) {
	data, err := os.ReadFile("../docs/matrix/manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseManifest("docs/matrix/manifest.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Clients) < 10 {
		t.Errorf("%d clients: the manifest should list every client the project installs", len(m.Clients))
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte("clients:\n" + goodClient))
	f.Add([]byte("clients:\n  - {name: a, versionCommand: v, command: 'sh x', provider: gemini, env: {A: b}, home: {a/b: c}}\n"))
	f.Add([]byte("clients: &a [*a]\n"))
	f.Add([]byte("- \n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest("f.yaml", data)
		if err == nil {
			if len(m.Clients) == 0 {
				t.Fatal("a manifest without clients accepted")
			}
			for _, c := range m.Clients {
				if c.Name == "" || c.Provider == "" || (len(c.Command) == 0 && c.Shell == "") || (c.Version == "") == (c.VersionCommand == "") {
					t.Fatalf("accepted an incomplete client %+v", c)
				}
			}
			return
		}
		if err.Error() == "" {
			t.Fatal("an error without text")
		}
	})
}
