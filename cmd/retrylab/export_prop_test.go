package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// genTrace writes a random trace v1 stream: runs (with runId, and lines
// without one) whose requests interleave, escalate (their
// ProviderRequestFinished names the model they ended on, their
// RetryAttempts the one they began on), count retries no RetryAttempt
// describes, fail, carry requestIds, labels, every delaySource and
// status, with timestamps of several precisions or none, and events of
// the other types between them (escalations, decisions, tickets, repairs,
// an unknown type), steps of them.
func genTrace(r *rand.Rand, steps int) (trace []byte, events int) {
	var b bytes.Buffer
	runs := 1 + r.IntN(3)
	clock := time.Date(2026, 11, 21, 23, 59, 0, 0, time.UTC)
	type req struct {
		run, prov, model, model2, id string
		attempts, left               int
		escalated, undescribed       bool
		start                        time.Time
	}
	var open []*req
	emit := func(run, typ string, payload any) {
		clock = clock.Add(time.Duration(r.IntN(3000)) * time.Millisecond)
		line := map[string]any{"v": 1, "type": typ, "payload": payload}
		switch r.IntN(8) {
		case 0: // no ts
		case 1:
			line["ts"] = clock.Format(time.RFC3339)
		case 2:
			line["ts"] = clock.Format(time.RFC3339Nano)
		default:
			line["ts"] = clock.Format("2006-01-02T15:04:05.000Z07:00")
		}
		if run != "" {
			line["runId"] = run
		}
		j, _ := json.Marshal(line)
		b.Write(append(j, '\n'))
		events++
	}
	runID := func() string {
		if i := r.IntN(runs + 1); i < runs {
			return fmt.Sprintf("run-%d", i)
		}
		return "" // lines without runId: the file's run
	}
	provs := []string{"anthropic", "openai", "gemini"}
	models := []string{"m-small", "m-large", "m-λ"}
	ftypes := []string{"overloaded", "rate_limit", "server_error", "connection_error", "timeout", "", "auth"}
	for ; steps > 0 || len(open) > 0; steps-- {
		switch k := r.IntN(10); {
		case k < 3 && steps > 0: // a request begins
			q := &req{run: runID(), prov: provs[r.IntN(3)], model: models[r.IntN(3)], attempts: r.IntN(4), start: clock}
			q.left, q.escalated, q.undescribed = q.attempts, r.IntN(4) == 0, r.IntN(5) == 0
			q.model2 = q.model
			if q.escalated {
				q.model2 = q.model + "-next"
			}
			if r.IntN(3) == 0 {
				q.id = fmt.Sprintf("req_%d", r.IntN(1000))
			}
			open = append(open, q)
		case k < 7 && len(open) > 0: // an attempt of an open request fails, or it finishes
			i := r.IntN(len(open))
			q := open[i]
			if q.left > 0 {
				q.left--
				if !q.undescribed {
					emit(q.run, "RetryAttempt", retryAttempt(r, q.prov, q.model, q.id, q.attempts-q.left, ftypes))
				}
				continue
			}
			open = append(open[:i], open[i+1:]...)
			if q.escalated {
				emit(q.run, "RunEscalated", map[string]any{"from": q.model, "to": q.model2, "reason": "auto_after_retries"})
			}
			p := map[string]any{"provider": q.prov, "model": q.model2, "durationMs": clock.Sub(q.start).Milliseconds() + int64(r.IntN(500)),
				"success": r.IntN(4) != 0, "retries": q.attempts}
			if !p["success"].(bool) {
				p["error"], p["failureType"] = "gave up: \"boom\" \u2603", ftypes[r.IntN(len(ftypes))]
			}
			if q.id != "" {
				p["requestId"] = q.id
			}
			if r.IntN(3) == 0 {
				p["promptPattern"], p["tags"] = "bugfix", []string{"a", "b"}
			}
			emit(q.run, "ProviderRequestFinished", p)
		default: // another event
			otherEvent(r, runID(), emit)
		}
	}
	return b.Bytes(), events
}

func retryAttempt(r *rand.Rand, prov, model, id string, n int, ftypes []string) map[string]any {
	p := map[string]any{"provider": prov, "model": model, "attempt": n, "maxAttempts": 4,
		"failureType": ftypes[r.IntN(len(ftypes))], "errorMessage": fmt.Sprintf("error %d <&> \\ \"q\"", r.IntN(5)),
		"willRetry": r.IntN(5) != 0, "delayMs": r.IntN(5000), "delaySource": []string{"backoff", "retry-after", "none"}[r.IntN(3)]}
	if s := []int{0, 429, 500, 503, 529, 400}[r.IntN(6)]; s != 0 {
		p["status"] = s
	}
	if p["delaySource"] == "retry-after" {
		p["retryAfterMs"] = p["delayMs"]
	}
	if id != "" {
		p["requestId"] = id
	}
	if r.IntN(4) == 0 {
		p["errorContext"] = true
	}
	return p
}

func otherEvent(r *rand.Rand, run string, emit func(run, typ string, payload any)) {
	switch r.IntN(7) {
	case 0:
		emit(run, "RunStarted", map[string]any{})
	case 1:
		emit(run, "RunEscalated", map[string]any{"from": "L2", "to": "L3", "reason": "patch_failures"})
	case 2:
		emit(run, "RetryDecision", map[string]any{"ticket": fmt.Sprintf("T-%d", r.IntN(3)), "attempt": r.IntN(3) + 1,
			"shouldRetry": r.IntN(2) == 0, "nextDelayMs": r.IntN(9000), "category": "transient"})
	case 3:
		emit(run, "TicketTransition", map[string]any{"ticket": fmt.Sprintf("T-%d", r.IntN(3)), "event": "retry", "to": "queued", "category": "transient"})
	case 4:
		emit(run, "RepairAttempted", map[string]any{"iteration": r.IntN(5)})
	case 5:
		emit(run, "IterationStarted", map[string]any{"iteration": 1})
	default:
		emit(run, "SomethingNew", map[string]any{"x": 1})
	}
}

// TestExportRoundTripRandom: for random trace v1 streams (genTrace),
// trace analyze of trace export --format otlp's output gives the
// analysis of the trace itself, every figure of its JSON, grouped by
// every dimension.
func TestExportRoundTripRandom(t *testing.T) {
	streams, events := 150, 0
	if testing.Short() {
		streams = 30
	}
	dir := t.TempDir()
	for seed := range streams {
		r := rand.New(rand.NewPCG(uint64(seed), 21))
		steps := 5 + r.IntN(40)
		if seed == 0 {
			steps = 6000 // runs of thousands of events: exports of 1000 spans or records each
		}
		tr, n := genTrace(r, steps)
		events += n
		src := filepath.Join(dir, fmt.Sprintf("trace-%d.jsonl", seed))
		if err := os.WriteFile(src, tr, 0o644); err != nil {
			t.Fatal(err)
		}
		otel := exportTo(t, src, filepath.Join(dir, fmt.Sprintf("otel-%d.json", seed)))
		if b, _ := os.ReadFile(otel); seed == 0 && bytes.Count(b, []byte("\n")) < 10 {
			t.Fatalf("a long stream's export has %d lines, want its runs cut into exports of 1000 items", bytes.Count(b, []byte("\n")))
		}
		for _, by := range []string{"provider,model", "failureType,run,day,promptPattern"} {
			want, got := analyzeRaw(t, src, by), analyzeRaw(t, otel, by)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("seed %d, --by %s: analyze of the trace vs of its OTLP export (-want +got):\n%s\ntrace:\n%s", seed, by, diff, tr)
			}
		}
	}
	// All at once: the same runIds in many files, lines without runId in
	// each; the export is one file where the trace was many.
	all := exportTo(t, dir, filepath.Join(t.TempDir(), "all.json"))
	want, got := analyzeMap(t, analyzeRaw(t, dir, "provider,model,run")), analyzeMap(t, analyzeRaw(t, all, "provider,model,run"))
	if w, g := want["inputs"].(map[string]any)["files"], got["inputs"].(map[string]any)["files"]; w != float64(streams) || g != 1.0 {
		t.Errorf("files: trace %v, export %v; want %d, 1", w, g, streams)
	}
	delete(want["inputs"].(map[string]any), "files")
	delete(got["inputs"].(map[string]any), "files")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("all streams: analyze of the traces vs of their OTLP export (-want +got):\n%s", diff)
	}
	t.Logf("%d random streams, %d events, round-tripped one by one and all at once", streams, events)
}

func analyzeMap(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// exportTo runs trace export --format otlp src into dst.
func exportTo(t *testing.T, src, dst string) string {
	t.Helper()
	var out, stderr bytes.Buffer
	if err := run(context.Background(), []string{"trace", "export", "--format", "otlp", src}, &out, &stderr); err != nil {
		t.Fatalf("export %s: %v\n%s", src, err, stderr.String())
	}
	if err := os.WriteFile(dst, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// analyzeRaw is trace analyze --format json of path, as text with the
// input's name replaced.
func analyzeRaw(t *testing.T, path, by string) string {
	t.Helper()
	var out, stderr bytes.Buffer
	err := run(context.Background(), []string{"trace", "analyze", "--format", "json", "--strict", "--by", by, path}, &out, &stderr)
	if err != nil && !strings.Contains(err.Error(), "alert") {
		t.Fatalf("analyze %s: %v\n%s", path, err, stderr.String())
	}
	return out.String()
}

// TestExportRoundTripCases: the traces of testdata/roundtrip (the hostile
// report's escalated request, retries without RetryAttempts and
// interleaved requests; real chaos runs of
// scenarios/epic-escalation-ladder.yaml and plandex-3-stream-fallback.yaml)
// give the same analysis through their OTLP export (export_otlp.txtar
// reads exports from standard input and pipes).
func TestExportRoundTripCases(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "roundtrip", "*.jsonl"))
	if len(files) < 5 {
		t.Fatalf("testdata/roundtrip holds %d traces, want 5", len(files))
	}
	dir := t.TempDir()
	for _, src := range files {
		t.Run(filepath.Base(src), func(t *testing.T) {
			otel := exportTo(t, src, filepath.Join(dir, filepath.Base(src)+".otlp.json"))
			want, got := analyzeRaw(t, src, "provider,model,run"), analyzeRaw(t, otel, "provider,model,run")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("analyze of the trace vs of its OTLP export (-want +got):\n%s", diff)
			}
		})
	}
}

// stripRetrylab writes src, trace export's OTLP/JSON, to dst without any
// retrylab.* attribute (an attribute-filtering collector), and returns
// dst.
func stripRetrylab(t *testing.T, src, dst string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if as, ok := v["attributes"].([]any); ok {
				kept := []any{}
				for _, a := range as {
					if k, _ := a.(map[string]any)["key"].(string); !strings.HasPrefix(k, "retrylab.") {
						kept = append(kept, a)
					}
				}
				v["attributes"] = kept
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	var out bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var doc any
		if err := json.Unmarshal(line, &doc); err != nil {
			t.Fatal(err)
		}
		walk(doc)
		j, _ := json.Marshal(doc)
		out.Write(append(j, '\n'))
	}
	if err := os.WriteFile(dst, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// strippedFigures are the figures of trace analyze's JSON that an export
// gives without its retrylab.* attributes (docs/analyze.md): requests but
// durationMs, attempts, recovery but timeToRecoveryMs, groups by
// provider, errorMessages but byModel; for traces whose retries are all
// described and whose requests' attempts can be told.
func strippedFigures(t *testing.T, s string) map[string]any {
	t.Helper()
	m := analyzeMap(t, s)
	req := m["requests"].(map[string]any)
	delete(req, "durationMs")
	rec := m["recovery"].(map[string]any)
	delete(rec, "timeToRecoveryMs")
	msgs := m["errorMessages"].(map[string]any)
	delete(msgs, "byModel") // an escalated request's attempts: the model it ended on
	return map[string]any{"requests": req, "attempts": m["attempts"], "recovery": rec, "groups": m["groups"], "errorMessages": msgs}
}

// TestExportStrippedRoundTrip: an export whose retrylab.* attributes a
// collector removed is read through the mappings (semconv), and gives the
// trace's request, retry, failure, status and delay figures: on random
// streams of requests whose retries are all described, with timestamps
// (genStrippable), on a real chaos run, and on two files of one runId
// (hostile report 3: the ids of their spans collided, and one file's
// request was read as the other's, contradicted).
func TestExportStrippedRoundTrip(t *testing.T) {
	dir := t.TempDir()
	srcs, _ := filepath.Glob(filepath.Join("testdata", "roundtrip", "[ep]*.jsonl")) // real chaos runs
	srcs = append(srcs, filepath.Join("testdata", "roundtrip", "hostile-escalated.jsonl"), filepath.Join("testdata", "roundtrip", "same-runid"))
	for seed := range 40 {
		r := rand.New(rand.NewPCG(uint64(seed), 6))
		src := filepath.Join(dir, fmt.Sprintf("trace-%d.jsonl", seed))
		if err := os.WriteFile(src, genStrippable(r, 3+r.IntN(12)), 0o644); err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, src)
	}
	for i, src := range srcs {
		otel := exportTo(t, src, filepath.Join(dir, fmt.Sprintf("otel-%d.json", i)))
		stripped := stripRetrylab(t, otel, filepath.Join(dir, fmt.Sprintf("stripped-%d.json", i)))
		if b, _ := os.ReadFile(stripped); bytes.Contains(b, []byte("retrylab.event")) {
			t.Fatalf("%s: retrylab.event left in the stripped export", src)
		}
		want, got := strippedFigures(t, analyzeRaw(t, src, "provider")), strippedFigures(t, analyzeRaw(t, stripped, "provider"))
		if want["requests"].(map[string]any)["total"] == 0.0 {
			t.Fatalf("%s: no request analysed", src)
		}
		if i == 3 {
			t.Logf("%s: %v", src, want)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			tr, _ := os.ReadFile(src)
			t.Fatalf("%s: analyze of the trace vs of its export stripped of retrylab.* (-want +got):\n%s\ntrace:\n%s", src, diff, tr)
		}
	}
}

// TestExportStrippedIDs: the ids of an export are its own. Two files of
// one runId exported apart and their exports put together, stripped of
// retrylab.*, give the figures of the two files (no span of one is taken
// for a span of the other); every line of it sent twice (an exporter's
// retry: the same ids, the same content) gives them too, each copy
// counted once; and the same input exports to the same bytes.
func TestExportStrippedIDs(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "roundtrip", "same-runid")
	var both []byte
	for _, f := range []string{"a", "b"} {
		b, err := os.ReadFile(exportTo(t, filepath.Join(src, f), filepath.Join(dir, f+".json")))
		if err != nil {
			t.Fatal(err)
		}
		both = append(both, b...)
	}
	once, twice := filepath.Join(dir, "both.json"), filepath.Join(dir, "twice.json")
	if err := os.WriteFile(once, both, 0o644); err != nil {
		t.Fatal(err)
	}
	stripped, err := os.ReadFile(stripRetrylab(t, once, filepath.Join(dir, "both-stripped.json")))
	if err != nil {
		t.Fatal(err)
	}
	var doubled []byte
	for _, l := range bytes.SplitAfter(stripped, []byte("\n")) {
		doubled = append(append(doubled, l...), l...)
	}
	if err := os.WriteFile(twice, doubled, 0o644); err != nil {
		t.Fatal(err)
	}
	want := strippedFigures(t, analyzeRaw(t, src, "provider"))
	for _, p := range []string{filepath.Join(dir, "both-stripped.json"), twice} {
		if diff := cmp.Diff(want, strippedFigures(t, analyzeRaw(t, p, "provider"))); diff != "" {
			t.Errorf("%s: analyze of the traces vs of their exports stripped of retrylab.* (-want +got):\n%s", filepath.Base(p), diff)
		}
	}
	again, err := os.ReadFile(exportTo(t, filepath.Join(src, "a"), filepath.Join(dir, "a-again.json")))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(both, again) {
		t.Error("the same trace exported twice: other bytes (ids must be deterministic)")
	}
}

// genStrippable writes n requests one after another, each with its
// RetryAttempts (statuses, failure types, waits; the last one's when it
// failed), timestamps agreeing with the waits.
func genStrippable(r *rand.Rand, n int) []byte {
	var b bytes.Buffer
	clock := time.Date(2026, 11, 21, 23, 59, 0, 0, time.UTC)
	emit := func(typ string, payload any) {
		j, _ := json.Marshal(map[string]any{"v": 1, "ts": clock.Format(time.RFC3339Nano), "type": typ, "runId": "s", "payload": payload})
		b.Write(append(j, '\n'))
	}
	provs := []string{"anthropic", "openai"}
	ftypes := []string{"overloaded", "rate_limit", "server_error", "timeout"}
	for range n {
		prov, start := provs[r.IntN(2)], clock
		retries, success := r.IntN(4), r.IntN(4) != 0
		tries := retries
		if !success {
			tries++
		}
		for k := range tries {
			clock = clock.Add(time.Duration(1+r.IntN(900)) * time.Millisecond)
			p := retryAttempt(r, prov, "m", "", k+1, ftypes)
			p["willRetry"] = k < retries
			if k == retries {
				p["delayMs"] = 0
			}
			emit("RetryAttempt", p)
			clock = clock.Add(time.Duration(p["delayMs"].(int)) * time.Millisecond)
		}
		clock = clock.Add(time.Duration(1+r.IntN(900)) * time.Millisecond)
		p := map[string]any{"provider": prov, "model": "m", "durationMs": clock.Sub(start).Milliseconds(), "success": success, "retries": retries}
		if !success {
			p["error"], p["failureType"] = "gave up", ftypes[r.IntN(len(ftypes))]
		}
		emit("ProviderRequestFinished", p)
		clock = clock.Add(time.Second)
	}
	return b.Bytes()
}
