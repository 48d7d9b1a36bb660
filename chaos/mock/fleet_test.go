package mock

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

func TestFleetClientOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key  string
		n    int
		want int
	}{
		{FleetKey(7), 12, 7},
		{FleetKey(1000), 1000, 1000},
		{FleetKey(13), 12, 0}, // not a client of this fleet
		{"sk-retrylab-fleet-0000", 12, 0},
		{"sk-retrylab-fleet-07", 12, 0},
		{"sk-retrylab-fleet-00x7", 12, 0},
		{"sk-retrylab-test-0000", 12, 0},
		{"", 12, 0},
	} {
		if got := FleetClientOf(tc.key, tc.n); got != tc.want {
			t.Errorf("FleetClientOf(%q, %d) = %d, want %d", tc.key, tc.n, got, tc.want)
		}
	}
}

// TestEnvFleet checks that the mock tells a fleet's clients apart by their
// keys in every place a format sends one, applies attempts: to each
// client's own attempts, numbers a keyless request among the keyless ones,
// and journals the client's index, never its key.
func TestEnvFleet(t *testing.T) {
	toxi := startToxi(t)
	sc := &scenario.Scenario{Name: "fleet", Provider: wire.ProviderAnthropic, Fleet: &scenario.Fleet{Clients: 3},
		Attempts: []scenario.Fault{{Kind: fault.Status{Status: 529}}}}
	e := startEnvWith(t, EnvConfig{Toxi: toxi, Scenario: sc, Fleet: 3})
	send := func(key func(*http.Request)) int {
		t.Helper()
		body := `{"model":"claude-haiku-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.BaseURL()+wire.PathAnthropic, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("content-type", "application/json")
		key(req)
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	header := func(name, value string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set(name, value) }
	}
	steps := []struct {
		key        func(*http.Request)
		status     int
		client, kN int
	}{
		{header("x-api-key", FleetKey(2)), 529, 2, 1},
		{header("Authorization", "Bearer "+FleetKey(1)), 529, 1, 1},
		{header("x-api-key", FleetKey(2)), 200, 2, 2},
		{func(r *http.Request) { r.URL.RawQuery = "key=" + FleetKey(3) }, 529, 3, 1},
		{header("x-api-key", "sk-someone-else"), 529, 0, 1},
		{header("x-goog-api-key", FleetKey(1)), 200, 1, 2},
		{func(*http.Request) {}, 200, 0, 2},
	}
	for i, s := range steps {
		if got := send(s.key); got != s.status {
			t.Errorf("request %d: status %d, want %d", i+1, got, s.status)
		}
		a := waitAttempts(t, e, i+1)[i]
		if a.Client != s.client || a.ClientN != s.kN {
			t.Errorf("request %d: client %d, its attempt %d; want %d, %d", i+1, a.Client, a.ClientN, s.client, s.kN)
		}
	}
	e.Close()
	j, err := os.ReadFile(e.journalPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(j), "sk-retrylab-fleet") {
		t.Errorf("the journal holds a fleet key")
	}
	if n := strings.Count(string(j), `"client":2`); n != 2 {
		t.Errorf("the journal names client 2 %d times, want 2", n)
	}
}
