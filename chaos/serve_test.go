package chaos

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/internal/wire"
)

// lineWriter hands each stdout line to a channel so the test can learn the
// base URLs as soon as Serve prints them.
type lineWriter struct {
	buf   syncBuffer
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	sc := bufio.NewScanner(strings.NewReader(string(p)))
	for sc.Scan() {
		select {
		case w.lines <- sc.Text():
		default:
		}
	}
	return len(p), nil
}

func TestServe(t *testing.T) {
	toxi := startToxi(t)
	ra := "1"
	sc := &scenario.Scenario{Name: "serve", Attempts: []scenario.Fault{{Kind: fault.Status{Status: 429, RetryAfter: &ra}}}}
	ctx, cancel := context.WithCancel(t.Context())
	stdout := &lineWriter{lines: make(chan string, 16)}
	stderr := &syncBuffer{}
	type result struct {
		v   ServeVerdict
		err error
	}
	done := make(chan result, 1)
	journalDir := t.TempDir()
	go func() {
		v, err := Serve(ctx, sc, toxi, journalDir+"/server.jsonl", stdout, stderr)
		done <- result{v, err}
	}()
	var anthropic, openai, gemini, otlpTraces string
	for anthropic == "" || openai == "" || gemini == "" || otlpTraces == "" {
		l := <-stdout.lines
		if v, ok := strings.CutPrefix(l, "ANTHROPIC_BASE_URL="); ok {
			anthropic = v
		}
		if v, ok := strings.CutPrefix(l, "OPENAI_BASE_URL="); ok {
			openai = v
		}
		if v, ok := strings.CutPrefix(l, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="); ok {
			otlpTraces = v
		}
		if v, ok := strings.CutPrefix(l, "GOOGLE_GEMINI_BASE_URL="); ok {
			gemini = v
		}
	}
	if openai != anthropic+"/v1" || gemini != anthropic {
		t.Errorf("OPENAI_BASE_URL = %q, GOOGLE_GEMINI_BASE_URL = %q, want %q and %q", openai, gemini, anthropic+"/v1", anthropic)
	}
	resp, _, err := post(t, t.Context(), anthropic, wire.PathAnthropic)
	if err != nil || resp.StatusCode != 429 {
		t.Fatalf("first attempt: %v %v", resp, err)
	}
	resp, _, err = post(t, t.Context(), openai, "/chat/completions")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("second attempt: %v %v", resp, err)
	}
	// The client's own account, in OTLP/JSON semconv spans: 429, then 200.
	export := `{"resourceSpans":[{"scopeSpans":[{"spans":[
 {"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"chat","kind":3,"startTimeUnixNano":"1","endTimeUnixNano":"9",
  "attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}}]},
 {"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b175","parentSpanId":"eee19b7ec3c1b174","name":"POST","kind":3,"startTimeUnixNano":"2","endTimeUnixNano":"3",
  "attributes":[{"key":"http.request.method","value":{"stringValue":"POST"}},{"key":"http.response.status_code","value":{"intValue":"429"}},{"key":"error.type","value":{"stringValue":"429"}}]},
 {"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b176","parentSpanId":"eee19b7ec3c1b174","name":"POST","kind":3,"startTimeUnixNano":"5","endTimeUnixNano":"8",
  "attributes":[{"key":"http.request.method","value":{"stringValue":"POST"}},{"key":"http.request.resend_count","value":{"intValue":"1"}},{"key":"http.response.status_code","value":{"intValue":"200"}}]}
]}]}]}`
	oresp, err := http.Post(otlpTraces, "application/json", strings.NewReader(export))
	if err != nil || oresp.StatusCode != 200 {
		t.Fatalf("OTLP export: %v %v", oresp, err)
	}
	oresp.Body.Close()
	cancel()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancellation")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.v.Attempts) != 2 || len(r.v.Gaps) != 1 || r.v.Attempts[0].Status != 429 || r.v.Attempts[1].Path != wire.PathOpenAI {
		t.Errorf("verdict = %+v", r.v)
	}
	if c := r.v.Checks[len(r.v.Checks)-1]; c.Name != "selfReport" || c.State != verify.StatePass {
		t.Errorf("last check = %+v, want selfReport passed", c)
	}
	for _, f := range []string{"otlp/traces-0001.json", verify.ClientOtelFile} {
		if _, err := os.Stat(filepath.Join(journalDir, f)); err != nil {
			t.Errorf("the client's telemetry is not kept beside the journal: %v", err)
		}
	}
	out := stdout.buf.String()
	for _, s := range []string{"server saw 2 attempt(s)", "attempt 1: status", "wait before attempt 2", "PASS selfReport"} {
		if !strings.Contains(out, s) {
			t.Errorf("stdout lacks %q:\n%s", s, out)
		}
	}
	if ps, _ := toxi.Client().Proxies(); len(ps) != 0 {
		t.Errorf("proxies left after Serve: %v", ps)
	}
	if !strings.Contains(stderr.String(), "path: direct)") {
		t.Errorf("stderr does not say the path (a 429 needs no proxy):\n%s", stderr.String())
	}
}

// TestServePath: chaos serve's clients talk to the mock itself unless a
// fault needs the proxy or --proxy always says so; its first line on
// stderr says which.
func TestServePath(t *testing.T) {
	toxi := startToxi(t)
	for _, tc := range []struct {
		name   string
		faults []scenario.Fault
		proxy  mock.ProxyMode
		want   string
	}{
		{"status", []scenario.Fault{{Kind: fault.Status{Status: 529}}}, "", mock.PathDirect},
		{"status, always", []scenario.Fault{{Kind: fault.Status{Status: 529}}}, mock.ProxyAlways, mock.PathToxiproxy},
		{"reset", []scenario.Fault{{Kind: fault.Reset{}}}, mock.ProxyAuto, mock.PathToxiproxy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			stdout := &lineWriter{lines: make(chan string, 16)}
			stderr := &syncBuffer{}
			done := make(chan error, 1)
			go func() {
				_, err := ServeWith(ctx, &scenario.Scenario{Name: "serve-path", Attempts: tc.faults}, toxi, ServeOptions{Proxy: tc.proxy}, stdout, stderr)
				done <- err
			}()
			var base string
			for base == "" {
				base, _ = strings.CutPrefix(<-stdout.lines, "ANTHROPIC_BASE_URL=")
			}
			ps, err := toxi.Client().Proxies()
			if err != nil {
				t.Fatal(err)
			}
			var listens []string
			for _, p := range ps {
				listens = append(listens, "http://"+p.Listen)
			}
			if through := slices.Contains(listens, base); through != (tc.want == mock.PathToxiproxy) {
				t.Errorf("base URL %s, proxies listening on %v; want path %s", base, listens, tc.want)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stderr.String(), "path: "+tc.want+")") {
				t.Errorf("stderr does not say path %s:\n%s", tc.want, stderr.String())
			}
		})
	}
}

// TestResetRaceFallback: a client that retries at once after a reset may
// connect before the proxy's toxics are switched. Whatever it meets, no
// attempt may hang and the attempt after it must be served.
func TestResetRaceFallback(t *testing.T) {
	toxi := startToxi(t)
	e := startEnv(t, toxi, wire.ProviderAnthropic, scenario.Fault{Kind: fault.Reset{}}, scenario.Fault{Kind: fault.Reset{}})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for i := 0; i < 2; i++ {
		if _, _, err := post(t, ctx, e.BaseURL(), wire.PathAnthropic); err == nil {
			t.Errorf("attempt %d: no error", i+1)
		}
	}
	waitAttempts(t, e, 2)
	resp, _, err := post(t, ctx, e.BaseURL(), wire.PathAnthropic)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("attempt 3: %v %v", resp, err)
	}
}

// TestServeChecks: chaos serve checks the scenario's expect from the
// server's side (it used to print the attempts and always pass).
func TestServeChecks(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	at := func(n int, fault string, status int, arrived, ended int) mock.ServerAttempt {
		return mock.ServerAttempt{N: n, Fault: fault, Status: status, Arrived: t0.Add(ms(arrived)), Ended: t0.Add(ms(ended))}
	}
	ok3 := []mock.ServerAttempt{at(1, "status", 529, 0, 10), at(2, "status", 529, 2010, 2020), at(3, "ok", 200, 6020, 6030)}
	type row struct {
		Name  string
		State string
	}
	for _, tc := range []struct {
		name     string
		yaml     string
		attempts []mock.ServerAttempt
		want     []row
		skipped  int
		// where the outcome check says it looked: the journal, not the
		// client's trace, which serve does not have.
		outcomeWhere string
	}{
		{"all pass", `
attempts: [{status: 529}, {status: 529}]
expect: {outcome: success, attempts: 3, failureTypes: [overloaded, overloaded], delays: [2s, 4s], maxDuration: 1m}
`, ok3, []row{{"outcome", verify.StatePass}, {"attempts", verify.StatePass}, {"failureTypes", verify.StateUnverified}, {"delays.server", verify.StatePass}}, 1,
			"server journal: last attempt (3: ok, status 200)"},
		{"client gave up early", `
attempts: [{status: 529}, {status: 529}]
expect: {outcome: success, attempts: 3}
`, ok3[:2], []row{{"outcome", verify.StateFail}, {"attempts", verify.StateFail}}, 0,
			"server journal: last attempt (2: status 529)"},
		{"still_retrying cannot be told", `
attempts: [{status: 529}, {status: 529}]
expect: {outcome: still_retrying, attempts: 2}
`, ok3[:2], []row{{"attempts", verify.StatePass}}, 1, ""},
		{"no attempts: outcome unknown", `
expect: {outcome: success, attempts: 1}
`, nil, []row{{"attempts", verify.StateFail}}, 1, ""},
		{"fewer waits than the policy allows", `
client: {policy: forgeflare}
attempts: [{status: 529}, {status: 529}]
expect: {attempts: 2, delays: policy}
`, ok3[:2], []row{{"attempts", verify.StatePass}, {"delays.server", verify.StateFail}}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := parse(t, "serve-checks", tc.yaml)
			cs, skipped := serveChecks(sc, tc.attempts)
			var got []row
			for _, c := range cs {
				got = append(got, row{c.Name, c.State})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("checks (-want +got):\n%s\n%+v", diff, cs)
			}
			for _, c := range cs {
				if c.Name == "outcome" && c.Where != tc.outcomeWhere {
					t.Errorf("outcome Where = %q, want %q", c.Where, tc.outcomeWhere)
				}
			}
			if len(skipped) != tc.skipped {
				t.Errorf("skipped = %q, want %d", skipped, tc.skipped)
			}
			v := ServeVerdict{Checks: cs}
			var b strings.Builder
			v.Write(&b)
			for _, r := range tc.want {
				verdict := strings.ToUpper(r.State) + " "
				if !strings.Contains(b.String(), verdict+r.Name+":") {
					t.Errorf("verdict lacks %q:\n%s", verdict+r.Name, b.String())
				}
			}
		})
	}
}

// TestServeJournalFolder: --journal into a folder that does not exist
// creates it.
func TestServeJournalFolder(t *testing.T) {
	toxi := startToxi(t)
	path := filepath.Join(t.TempDir(), "new", "deeper", "server.jsonl")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Serve(ctx, &scenario.Scenario{Name: "j"}, toxi, path, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("journal not created: %v", err)
	}
}

// TestServeFindings: serve's verdict lists the findings the journal shows,
// with the detectors of chaos run: a Retry-After of 2s not waited is
// retry_after_ignored; waited, nothing.
func TestServeFindings(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	at := func(n int, fault string, status int, arrived, ended int) mock.ServerAttempt {
		return mock.ServerAttempt{N: n, Fault: fault, Status: status, Arrived: t0.Add(ms(arrived)), Ended: t0.Add(ms(ended))}
	}
	sc := parse(t, "serve-findings", `
attempts: [{status: 429, retryAfter: "2"}]
expect: {attempts: 2}
`)
	for _, tc := range []struct {
		name     string
		attempts []mock.ServerAttempt
		want     []string
	}{
		{"retried at once", []mock.ServerAttempt{at(1, "status", 429, 0, 10), at(2, "ok", 200, 30, 40)}, []string{"retry_after_ignored"}},
		{"waited", []mock.ServerAttempt{at(1, "status", 429, 0, 10), at(2, "ok", 200, 2030, 2040)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := ServeVerdict{Findings: serveFindings(sc, tc.attempts)}
			var got []string
			for _, f := range v.Findings {
				got = append(got, f.Code)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("findings (-want +got):\n%s\n%+v", diff, v.Findings)
			}
			var b strings.Builder
			if err := v.Write(&b); err != nil {
				t.Fatal(err)
			}
			for _, c := range tc.want {
				if !strings.Contains(b.String(), "FINDING "+c+" (attempts 1, 2): ") {
					t.Errorf("verdict lacks the finding %s:\n%s", c, b.String())
				}
			}
		})
	}
}
