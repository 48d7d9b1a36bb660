package probe

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestJournalRoundTrip: each measured agent's journal, written again by
// Marshal, reads back as the same observations and infers the same profile.
func TestJournalRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "agents", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no journals: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			prov, obs, err := LoadJournal(f)
			if err != nil {
				t.Fatal(err)
			}
			data, err := Journal{Provider: prov.Name, Observations: obs}.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(data), `{"provider":"`+prov.Name+`","observations":[`) || !strings.HasSuffix(string(data), "}\n") {
				t.Errorf("not one line of JSON: %.80s", data)
			}
			prov2, obs2, err := ParseJournal(data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(obs, obs2); diff != "" || prov2.Name != prov.Name {
				t.Errorf("round trip mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(Infer(prov, obs), Infer(prov2, obs2)); diff != "" {
				t.Errorf("profile mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJournalHostile: figures JSON cannot hold are written as Infer reads
// them (not an error that would lose the whole journal), and what is not a
// journal is refused with the reason.
func TestJournalHostile(t *testing.T) {
	j := Journal{Provider: "openai", Observations: []Observation{{Fault: "503 until it gives up", Attempts: 3, End: EndGaveUp,
		WaitsMs: []float64{math.NaN(), 500}, WaitNoiseMs: []float64{math.Inf(1)}, NoiseMs: math.Inf(-1), ArrivalsMs: []float64{0, math.NaN()}}}}
	data, err := j.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	_, obs, err := ParseJournal(data)
	if err != nil {
		t.Fatal(err)
	}
	want := Observation{Fault: "503 until it gives up", Attempts: 3, End: EndGaveUp, WaitsMs: []float64{0, 500}, WaitNoiseMs: []float64{maxWaitMs}, ArrivalsMs: []float64{0, 0}}
	if diff := cmp.Diff([]Observation{want}, obs); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Infer(openaiProvider(t), j.Observations), Infer(openaiProvider(t), obs)); diff != "" {
		t.Errorf("the journal infers another profile (-observations +journal):\n%s", diff)
	}
	if !math.IsNaN(j.Observations[0].WaitsMs[0]) {
		t.Error("Marshal changed the caller's observations")
	}
	for _, tt := range []struct{ name, in, want string }{
		{"not JSON", "{", "not a probe journal"},
		{"unknown provider", `{"provider":"gemini2","observations":[]}`, `unknown provider "gemini2"`},
		{"no provider", `{"observations":[]}`, "unknown provider"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := ParseJournal([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	dir := t.TempDir()
	if _, _, err := LoadJournal(dir); err == nil {
		t.Error("a folder read as a journal")
	}
	p := filepath.Join(dir, "j.json")
	if err := os.WriteFile(p, []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadJournal(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("err = %v, want the path", err)
	}
}

func openaiProvider(t *testing.T) Provider {
	t.Helper()
	p, err := LookupProvider("openai")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// FuzzParseJournal reads any bytes as a journal (a file a user hands to
// LoadJournal): a refusal or observations whose profile is JSON with a
// policy that parses, and whose journal written again reads back.
func FuzzParseJournal(f *testing.F) {
	for _, name := range []string{"anthropic-python.json", "genai-python.json", "aider.json"} {
		if data, err := os.ReadFile(filepath.Join("testdata", "agents", name)); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"provider":"openai","observations":[{"fault":"503 until it gives up","sample":1,"attempts":-3,"waitsMs":[1e308,-1],"waitNoiseMs":[],"end":"??"}]}`))
	f.Add([]byte(`{"provider":"gemini","observations":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		prov, obs, err := ParseJournal(data)
		if err != nil {
			return
		}
		if len(obs) > 200 {
			obs = obs[:200] // Infer's cost grows with the runs; the parser is what is fuzzed
		}
		inferAll(t, prov, obs)
		again, err := Journal{Provider: prov.Name, Observations: obs}.Marshal()
		if err != nil {
			t.Fatalf("the journal does not encode: %v", err)
		}
		if _, _, err := ParseJournal(again); err != nil {
			t.Fatalf("the journal written again does not read: %v\n%s", err, again)
		}
	})
}
