package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
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
	var scs []*Scenario
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
	sum, err := r.Run(context.Background(), []*Scenario{sc})
	if err != nil {
		t.Fatal(err)
	}
	res := sum.Scenarios[0]
	var client *Check
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
