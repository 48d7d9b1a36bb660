package battery

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/probe"
	"github.com/retrylab/retrylab/trace"
)

// TestUnservedPath: a client that posts to a path the format does not
// serve reached the mock (its journal holds the 404s of the side
// requests): the profile says so, not "never reached the mock" (hostile
// report).
func TestUnservedPath(t *testing.T) {
	prov, _ := probe.LookupProvider("anthropic")
	dir := t.TempDir()
	var lines []string
	for _, q := range []trace.MockRequest{
		{Side: true, Method: "POST", Path: "/v2/chat", Status: 404},
		{Side: true, Method: "POST", Path: "/v2/chat", Status: 404},
		{Side: true, Method: "GET", Path: "/v1/models", Status: 200},
	} {
		pl, _ := json.Marshal(q)
		ev, _ := json.Marshal(trace.Event{V: 1, Type: trace.TypeMockRequest, Payload: pl})
		lines = append(lines, string(ev))
	}
	if err := os.WriteFile(filepath.Join(dir, "server.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var obs []probe.Observation
	for _, f := range prov.Faults {
		r := chaos.Result{Dir: dir, Outcome: "failure", Attempts: 0}
		obs = append(obs, Observe(Probe{Fault: f, Served: 1}, r, 1))
	}
	if got := obs[0].Unserved; len(got) != 1 || got[0] != "POST /v2/chat" {
		t.Fatalf("Unserved = %q, want [POST /v2/chat]", got)
	}
	p := probe.Infer(prov, obs)
	if !strings.Contains(p.Unreached, "reached the mock on a path the format does not serve (POST /v2/chat, answered 404/405") ||
		strings.Contains(p.Unreached, "never reached") {
		t.Errorf("Unreached = %q", p.Unreached)
	}
	if f := p.Faults[0]; f.End != probe.EndNoRequest || !strings.Contains(f.Note, "/v2/chat") {
		t.Errorf("%s: end %q note %q", f.Fault, f.End, f.Note)
	}
}
