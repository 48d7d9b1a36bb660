package scenario

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestClientFileApply: a client file carries every field of its client
// block that shapes the client's run into the probe's scenarios — the
// environment it inherits included — and leaves the scenario's policy.
func TestClientFileApply(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "client.yaml")
	src := `client:
  command: [my-agent, run]
  env: {MY_AGENT_PROVIDER: anthropic}
  inheritEnv: [MY_AGENT_LICENSE]
  home: {.config/a.json: "{}"}
  requires: [sh]
  requiresHint: install it
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cf, err := LoadClient(file)
	if err != nil {
		t.Fatal(err)
	}
	sc := &Scenario{Client: Client{Policy: ClientPolicy{path: "p.yaml"}}}
	cf.Apply(sc)
	want := Client{Policy: ClientPolicy{path: "p.yaml"}, Command: []string{"my-agent", "run"},
		Env: map[string]string{"MY_AGENT_PROVIDER": "anthropic"}, InheritEnv: []string{"MY_AGENT_LICENSE"},
		Home: map[string]string{".config/a.json": "{}"}, Requires: []string{"sh"}, RequiresHint: "install it"}
	if diff := cmp.Diff(want, sc.Client, cmp.AllowUnexported(ClientPolicy{})); diff != "" {
		t.Errorf("Apply() mismatch (-want +got):\n%s", diff)
	}
}
