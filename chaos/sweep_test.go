package chaos_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/report"
	"github.com/retrylab/retrylab/trace"
	"github.com/retrylab/retrylab/trace/analyze"
)

// TestMain lets this test binary be a client of chaos run (helperClient)
// and the supervisor of one (client.MaybeSupervise, first thing, as in
// retrylab's main).
func TestMain(m *testing.M) {
	client.MaybeSupervise()
	if name := os.Getenv("RETRYLAB_TEST_CLIENT"); name != "" {
		os.Exit(helperClient(name))
	}
	os.Exit(m.Run())
}

// helperClient runs the named test client.
func helperClient(name string) int {
	switch name {
	case "leaky":
		return leakyClient()
	}
	fmt.Fprintln(os.Stderr, "unknown test client", name)
	return 2
}

// sweepKeys are the keys leakyClient sends, one per place a client can send
// one. None looks like a key to provider.Redact: each is scrubbed only if
// the mock learnt it. They hold / and + so that encoding them changes them.
var sweepKeys = map[string]string{
	"header":       "AKIAhdr/KEY+00001",
	"bearer":       "AKIAbrr/KEY+00002",
	"query-key":    "AKIAqry/KEY+00003",
	"query-token":  "AKIAtok/KEY+00004",
	"body-api_key": "AKIAbdy/KEY+00005",
	"body-token":   "AKIAdeep/KEY+0006",
	"body-apiKey":  "AKIAcml/KEY+00007",
	"goog-header":  "AKIAgoo/KEY+00008",
}

// keyForms are the ways leakyClient writes a key: plain, JSON-escaped
// (wholly, or its first character), percent-encoded (wholly, or partly).
func keyForms(k string) map[string]string {
	var esc, pct strings.Builder
	for _, c := range []byte(k) {
		fmt.Fprintf(&esc, `\u%04x`, c)
		fmt.Fprintf(&pct, "%%%02X", c)
	}
	return map[string]string{
		"plain":       k,
		"json-all":    esc.String(),
		"json-first":  fmt.Sprintf(`\u%04X`, k[0]) + k[1:],
		"percent-all": pct.String(),
		"percent-std": url.QueryEscape(k),
	}
}

// leakyClient sends every key of sweepKeys in its place, then writes each in
// every form to stdout, stderr and its trace.
func leakyClient() int {
	base := os.Getenv("RETRYLAB_BASE_URL")
	k := sweepKeys
	body := fmt.Sprintf(`{"model":"m","max_tokens":5,"stream":false,"api_key":%q,"metadata":{"deep":[{"token":%q}],"apiKey":%q}}`,
		k["body-api_key"], k["body-token"], k["body-apiKey"])
	u := base + "/v1/messages?key=" + url.QueryEscape(k["query-key"]) + "&access_token=" + url.QueryEscape(k["query-token"])
	req, err := http.NewRequest("POST", u, strings.NewReader(body))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	req.Header.Set("x-api-key", k["header"])
	req.Header.Set("x-goog-api-key", k["goog-header"])
	req.Header.Set("Authorization", "Bearer "+k["bearer"])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	tr, err := os.OpenFile(os.Getenv("RETRYLAB_TRACE"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer tr.Close()
	for place, key := range k {
		for form, v := range keyForms(key) {
			fmt.Printf("%s %s: %s\n", place, form, v)
			fmt.Fprintf(os.Stderr, "%s %s: %s\n", place, form, v)
			// In a JSON string, a \u escape stays as it is (the reader
			// decodes it); anything else is quoted.
			q := fmt.Sprintf("%q", v)
			if strings.HasPrefix(form, "json") {
				q = `"` + v + `"`
			}
			fmt.Fprintf(tr, `{"v":1,"type":"ProviderRequestFinished","run_id":%s,"payload":{"success":true,"retries":0,"provider":%s,"model":%s,"note":%s}}`+"\n", q, q, q, q)
			fmt.Fprintf(tr, "not json %s\n", v)
		}
	}
	return 0
}

// TestSweepKeysEveryOutput is the regression test for keys a client sent as
// a query parameter or a JSON body field (never learnt), or wrote escaped
// (\u0041KIA..., percent-encoded: not matched): a full run whose client
// sends a key in every place and writes each in every form to stdout,
// stderr and its trace leaves none, in any form, in any file of the run
// folder, nor in any format of trace analyze over it.
func TestSweepKeysEveryOutput(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The client is this test binary, told which client to be on its
	// command line: the runner's environment does not reach it.
	sc, err := scenario.ParseScenario("sweep.yaml", []byte(fmt.Sprintf(`
client: {command: [env, RETRYLAB_TEST_CLIENT=leaky, %q]}
attempts: []
expect: {outcome: success, attempts: 1}
`, exe)))
	if err != nil {
		t.Fatal(err)
	}
	toxi, err := mock.StartToxiproxy(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer toxi.Close()
	r := &chaos.Runner{Toxi: toxi, Out: t.TempDir(), Seed: 1, Confirm: 0}
	sum, err := r.Run(context.Background(), []*scenario.Scenario{sc})
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string][]byte{}
	files := 0
	err = filepath.WalkDir(sum.RunDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		outputs[p] = b
		files++
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"stdout.txt", "stderr.txt", "trace.jsonl", "mock.log", "server.jsonl", "result.json"} {
		if _, ok := outputs[filepath.Join(sum.RunDir, "sweep", name)]; !ok {
			t.Errorf("no %s in the run folder", name)
		}
	}
	if b := outputs[filepath.Join(sum.RunDir, "sweep", "stdout.txt")]; !bytes.Contains(b, []byte("header plain: ***")) {
		t.Errorf("stdout.txt does not hold the client's lines, redacted:\n%s", b)
	}
	traces, err := trace.Discover([]string{sum.RunDir})
	if err != nil || len(traces) == 0 {
		t.Fatalf("trace.Discover = %v, %v", traces, err)
	}
	a, err := analyze.Run(context.Background(), traces, analyze.Options{Alerts: analyze.DefaultAlerts()})
	if err != nil {
		t.Fatal(err)
	}
	for name, render := range map[string]func(io.Writer, *analyze.Analysis) error{
		"table": report.AnalysisTable, "json": report.AnalysisJSON, "markdown": report.AnalysisMarkdown,
		"html": report.AnalysisHTML, "openmetrics": report.AnalysisOpenMetrics,
	} {
		var buf bytes.Buffer
		if err := render(&buf, a); err != nil {
			t.Fatalf("analyze --format %s: %v", name, err)
		}
		outputs["trace analyze --format "+name] = buf.Bytes()
	}
	for where, b := range outputs {
		for place, key := range sweepKeys {
			for form, v := range keyForms(key) {
				if bytes.Contains(b, []byte(v)) {
					t.Errorf("%s holds the %s key, %s: %q", where, place, form, v)
				}
			}
		}
	}
	t.Logf("%d files and 5 analyze formats swept for %d keys in 5 forms", files, len(sweepKeys))
}
