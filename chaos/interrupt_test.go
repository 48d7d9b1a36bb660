package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
)

// cancelOn is a progress writer that cancels a context, with cause, once a
// progress line holds marker.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel context.CancelCauseFunc
	cause  error
}

func (w *cancelOn) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.marker) {
		w.cancel(w.cause)
	}
	return len(p), nil
}

var errTestInterrupt = errors.New("interrupted by the test")

// TestRunInterruptMarksUnfinished: an interrupted run recorded its
// unfinished built-in scenarios as ordinary failures (failureType
// "canceled"). They are now "interrupted" with the interrupt's cause, a
// scenario never started is listed as interrupted too, and summary.json
// and each started scenario's result.json are written.
func TestRunInterruptMarksUnfinished(t *testing.T) {
	toxi := runnerToxi(t)
	// Two scenarios one at a time, each waiting a minute after its first
	// attempt: the first to start is interrupted in that wait, the other
	// never starts.
	var scs []*scenario.Scenario
	for _, name := range []string{"a", "b"} {
		scs = append(scs, parse(t, name, `
client: {policy: forgeflare}
attempts: [{status: 429, retryAfter: "120"}]
expect: {outcome: success, attempts: 2}
`))
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	progress := &cancelOn{marker: "[retry] Attempt 1/", cancel: cancel, cause: errTestInterrupt}
	r := &Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), Parallel: 1, Progress: progress, Seed: 1}
	sum, err := r.Run(ctx, scs)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Interrupted != 2 || sum.Failed != 0 || sum.Passed != 0 {
		t.Fatalf("interrupted %d failed %d passed %d, want 2, 0, 0:\n%s", sum.Interrupted, sum.Failed, sum.Passed, progress.buf.String())
	}
	var started, never Result
	for _, res := range sum.Scenarios {
		if strings.HasPrefix(res.Interrupted, "unfinished") {
			started = res
		} else {
			never = res
		}
	}
	if started.Verdict != VerdictInterrupted || started.Interrupted != "unfinished: interrupted by the test" || started.Attempts != 1 || len(started.Checks) != 0 {
		t.Errorf("the started scenario = %+v, want interrupted after its one attempt, with no checks", started)
	}
	if never.Verdict != VerdictInterrupted || never.Interrupted != "not started: interrupted by the test" {
		t.Errorf("the other = %+v, want interrupted before it started", never)
	}
	var back Summary
	if raw, err := os.ReadFile(filepath.Join(sum.RunDir, "summary.json")); err != nil || json.Unmarshal(raw, &back) != nil || back.Interrupted != 2 {
		t.Errorf("summary.json: %v, %d interrupted, want 2", err, back.Interrupted)
	}
	var ra Result
	if raw, err := os.ReadFile(filepath.Join(started.Dir, "result.json")); err != nil || json.Unmarshal(raw, &ra) != nil || ra.Verdict != VerdictInterrupted {
		t.Errorf("result.json: %v, verdict %q, want interrupted", err, ra.Verdict)
	}
}

// TestBuiltinClientHonoursDeadline: with requests: 100000000 and
// maxDuration: 1s the built-in client kept looping past its deadline (and
// past Ctrl-C), each request failing at once as canceled, writing 183 MB of
// trace and log. It now starts no request once its deadline has passed and
// fails the client check.
func TestBuiltinClientHonoursDeadline(t *testing.T) {
	toxi := runnerToxi(t)
	sc := parse(t, "many", `
requests: 100000000
attempts: []
expect: {maxDuration: 1s}
`)
	var progress bytes.Buffer
	r := &Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), Progress: &syncWriter{w: &progress}, Seed: 1}
	sum, err := r.Run(context.Background(), []*scenario.Scenario{sc})
	if err != nil {
		t.Fatal(err)
	}
	res := sum.Scenarios[0]
	var client *verify.Check
	for i, c := range res.Checks {
		if c.Name == "client" {
			client = &res.Checks[i]
		}
	}
	if res.Verdict != VerdictFail || client == nil || client.Passed || !strings.Contains(client.Got, "still running at the deadline") {
		t.Errorf("result = %s with client check %+v, want a failed client check at the deadline", res.Verdict, client)
	}
	fi, err := os.Stat(filepath.Join(res.Dir, "trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// One second of real requests is a few thousand lines at most; the
	// loop that ignored its deadline wrote tens of megabytes a second.
	if fi.Size() > 8<<20 {
		t.Errorf("trace.jsonl is %d bytes: the client went on past its deadline", fi.Size())
	}
	if n := strings.Count(progress.String(), "canceled"); n > 2 {
		t.Errorf("%d requests failed as canceled after the deadline, want at most one:\n%.2000s", n, progress.String())
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

// issueFolder is the folder of issue 18's Ctrl-C report: a slow backoff, a
// hang, a 30 s latency, an external client that ignores SIGTERM (it writes
// its pid to pidFile first) and a quick scenario.
func issueFolder(t *testing.T, pidFile string) []*scenario.Scenario {
	t.Helper()
	return []*scenario.Scenario{
		parse(t, "slow-backoff", `
client: {policy: forgeflare}
attempts: [{status: 529}, {status: 529}, {status: 529}]
expect: {outcome: success, attempts: 4}
`),
		parse(t, "hang", `
client: {policy: forgeflare, timeout: 60s}
attempts: [{hang: {}}]
expect: {outcome: success, attempts: 2}
`),
		parse(t, "latency", `
client: {policy: forgeflare, timeout: 60s}
attempts: [{latency: 30s}]
expect: {outcome: success, attempts: 1}
`),
		parse(t, "ignores-term", `
client:
  command: ["sh", "-c", "echo $$ > `+pidFile+`; trap '' TERM; sleep 30"]
expect: {outcome: success, attempts: 0}
`),
		parse(t, "quick", `
client: {policy: forgeflare}
attempts: []
expect: {outcome: success, attempts: 1}
`),
	}
}

// waitUntil polls cond every 10ms until it holds, failing the test after a
// guard far above what any machine needs.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// verdicts maps each scenario of sum to its verdict.
func verdicts(sum *Summary) map[string]string {
	out := map[string]string{}
	for _, r := range sum.Scenarios {
		out[r.Name] = r.Verdict
	}
	return out
}

// stallingToxi is a Toxiproxy whose API (in front of an embedded server,
// returned too), once stall is called, holds every DELETE until release is
// called, as a slow or stuck toxiproxy-server would; deleted counts the
// DELETEs let through since stall.
func stallingToxi(t *testing.T) (toxi, backend *mock.Toxiproxy, stall, release func(), deleted *atomic.Int32) {
	t.Helper()
	backend = runnerToxi(t)
	target, err := url.Parse(backend.URL())
	if err != nil {
		t.Fatal(err)
	}
	fwd := httputil.NewSingleHostReverseProxy(target)
	held := make(chan struct{})
	var stalled atomic.Bool
	deleted = &atomic.Int32{}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete && stalled.Load() {
			<-held
			defer deleted.Add(1)
		}
		fwd.ServeHTTP(w, r)
	}))
	stall = func() { stalled.Store(true) }
	var once sync.Once
	release = func() { once.Do(func() { close(held) }) }
	t.Cleanup(front.Close)
	t.Cleanup(release) // runs first: no handler is left holding
	toxi, err = mock.StartToxiproxy(context.Background(), front.URL)
	if err != nil {
		t.Fatal(err)
	}
	return toxi, backend, stall, release, deleted
}

// TestInterruptWritesWhatFinishedFirst is the regression test for issue 18
// item 2 at the Runner: Ctrl-C 0.7 s into the issue's folder lost
// summary.json about one run in three, because the summary was written
// only once every scenario had stopped, and stopping waited on a
// supervisor (its killed client's orphan stayed a zombie), on the proxy
// API, on attempts in progress. Here the proxy API holds every DELETE until
// the test lets it go: summary.json and OnInterrupt's summary must come
// first (the quick scenario's pass, the four others interrupted), and once
// the API answers again every proxy is deleted.
func TestInterruptWritesWhatFinishedFirst(t *testing.T) {
	toxi, backend, stall, release, deleted := stallingToxi(t)
	pidFile := filepath.Join(t.TempDir(), "client.pid")
	scs := issueFolder(t, pidFile)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	progress := &syncWriter{w: &bytes.Buffer{}}
	type interim struct {
		sum      *Summary
		onDisk   Summary
		diskErr  error
		deletesB int32
	}
	got := make(chan interim, 1)
	r := &Runner{Toxi: toxi, ToxiName: "stalling", Out: t.TempDir(), Progress: progress, Seed: 1, Confirm: 0,
		OnInterrupt: func(sum *Summary) error {
			it := interim{sum: sum, deletesB: deleted.Load()}
			raw, err := os.ReadFile(filepath.Join(sum.RunDir, "summary.json"))
			if it.diskErr = err; err == nil {
				it.diskErr = json.Unmarshal(raw, &it.onDisk)
			}
			got <- it
			return nil
		}}
	type ran struct {
		sum *Summary
		err error
	}
	done := make(chan ran, 1)
	go func() {
		sum, err := r.Run(ctx, scs)
		done <- ran{sum, err}
	}()
	// "0.7 s in": the quick scenario has passed, the backoff is waiting,
	// the external client runs.
	waitUntil(t, "the quick scenario to pass, the backoff to wait and the client to run", func() bool {
		_, err := os.Stat(pidFile)
		p := progress.String()
		return err == nil && strings.Contains(p, "[quick] PASS") && strings.Contains(p, "[slow-backoff] [retry] Attempt 1/")
	})
	stall()
	cancel(errTestInterrupt)
	var it interim
	select {
	case it = <-got:
	case <-time.After(time.Minute):
		t.Fatalf("OnInterrupt not called a minute after the interrupt:\n%s", progress.String())
	}
	want := map[string]string{"quick": VerdictPass, "slow-backoff": VerdictInterrupted, "hang": VerdictInterrupted,
		"latency": VerdictInterrupted, "ignores-term": VerdictInterrupted}
	if diff := cmp.Diff(want, verdicts(it.sum)); diff != "" {
		t.Errorf("OnInterrupt's summary mismatch (-want +got):\n%s", diff)
	}
	if it.diskErr != nil {
		t.Errorf("summary.json when OnInterrupt was called: %v", it.diskErr)
	} else if diff := cmp.Diff(want, verdicts(&it.onDisk)); diff != "" {
		t.Errorf("summary.json when OnInterrupt was called mismatch (-want +got):\n%s", diff)
	}
	if it.deletesB != 0 {
		t.Errorf("%d proxies deleted before the summary was written, want 0: it waited for the proxy API", it.deletesB)
	}
	// While Run waits on the proxy API, Interim has the same at once (what
	// the CLI prints if it must exit now).
	if sum := r.Interim(); sum == nil {
		t.Error("Interim() = nil while Run waits on the proxy API")
	} else if diff := cmp.Diff(want, verdicts(sum)); diff != "" {
		t.Errorf("Interim() mismatch (-want +got):\n%s", diff)
	}
	release()
	var res ran
	select {
	case res = <-done:
	case <-time.After(time.Minute):
		t.Fatalf("Run still running a minute after the interrupt:\n%s", progress.String())
	}
	if res.err != nil {
		t.Fatal(res.err)
	}
	if r.Interim() != nil {
		t.Error("Interim() != nil once Run has returned: a forced exit would print a second report")
	}
	if diff := cmp.Diff(want, verdicts(res.sum)); diff != "" {
		t.Errorf("final summary mismatch (-want +got):\n%s", diff)
	}
	var quick Result
	if raw, err := os.ReadFile(filepath.Join(res.sum.RunDir, "quick", "result.json")); err != nil || json.Unmarshal(raw, &quick) != nil || quick.Verdict != VerdictPass {
		t.Errorf("quick/result.json: %v, verdict %q, want pass", err, quick.Verdict)
	}
	// What the CLI does next: Close deletes what the interrupt could not.
	if err := toxi.Close(); err != nil {
		t.Errorf("closing: %v", err)
	}
	all, err := backend.Client().Proxies()
	if err != nil {
		t.Fatal(err)
	}
	for name := range all {
		t.Errorf("proxy %s left on the server", name)
	}
}
