// Command gen writes a synthetic corpus of run folders for benchmarking
// `retrylab trace analyze` against the seed's jq pipelines:
//
//	go run ./bench/gen -out bench/corpus -events 1000000 -runs 1000
//
// Each run folder holds a trace.jsonl in trace format v1 with a realistic
// mix of events (requests, failed attempts, escalations, L2 iterations,
// repairs, steps, diagnoses). The output is deterministic for a given -seed.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

func main() {
	out := flag.String("out", "bench/corpus", "output folder")
	events := flag.Int("events", 1_000_000, "approximate number of events")
	runs := flag.Int("runs", 1000, "number of run folders")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if err := gen(*out, *events, *runs, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
}

var (
	providers = []string{"anthropic", "openai"}
	models    = map[string][]string{
		"anthropic": {"claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-1"},
		"openai":    {"gpt-4o", "gpt-4o-mini"},
	}
	failures = []struct {
		typ    string
		status int
	}{{"rate_limit", 429}, {"overloaded", 529}, {"server_error", 503}, {"server_error", 500}, {"timeout", 0}, {"network", 0}}
)

func gen(out string, events, runs int, seed uint64) error {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	per := max(events/runs, 10)
	base := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	total := 0
	for i := range runs {
		dir := filepath.Join(out, fmt.Sprintf("run-%05d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		n, err := writeRun(filepath.Join(dir, "trace.jsonl"), fmt.Sprintf("r-%05d", i), base.Add(time.Duration(i)*time.Minute), per, r)
		if err != nil {
			return err
		}
		total += n
	}
	fmt.Fprintf(os.Stderr, "wrote %d events in %d runs under %s\n", total, runs, out)
	return nil
}

// emitter writes one run's events, each a little after the one before.
type emitter struct {
	w     *bufio.Writer
	r     *rand.Rand
	runID string
	ts    time.Time
	n     int
}

func (e *emitter) emit(typ, payload string) {
	e.ts = e.ts.Add(time.Duration(e.r.IntN(900)+100) * time.Millisecond)
	fmt.Fprintf(e.w, `{"v":1,"ts":"%s","type":"%s","runId":"%s","payload":%s}`+"\n", e.ts.Format("2006-01-02T15:04:05.000Z"), typ, e.runID, payload)
	e.n++
}

// writeRun writes one run of about per events to path.
func writeRun(path, runID string, start time.Time, per int, r *rand.Rand) (int, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	e := &emitter{w: bufio.NewWriterSize(f, 1<<20), r: r, runID: runID, ts: start}
	e.emit("RunStarted", `{"scenario":"bench","policy":"orchestrator"}`)
	l2 := r.IntN(3) == 0
	iter := 0
	for e.n < per-1 {
		model := e.request()
		e.sideEvents(l2, &iter, model)
	}
	e.emit("RunFinished", `{"success":true,"durationMs":60000}`)
	if err := e.w.Flush(); err != nil {
		f.Close()
		return 0, err
	}
	return e.n, f.Close()
}

// request writes one request: its failed attempts (0 to 3 retries, the
// last one sometimes failing for good) and its ProviderRequestFinished.
func (e *emitter) request() (model string) {
	r := e.r
	prov := providers[r.IntN(len(providers))]
	model = models[prov][r.IntN(len(models[prov]))]
	retries := 0
	switch x := r.IntN(100); {
	case x < 80:
	case x < 92:
		retries = 1
	case x < 97:
		retries = 2
	default:
		retries = 3
	}
	success := retries < 3 || r.IntN(2) == 0
	for a := 1; a <= retries+1; a++ {
		if a == retries+1 && success {
			break
		}
		fl := failures[r.IntN(len(failures))]
		will := a <= retries
		delay := 0
		src := "none"
		if will {
			delay = min(1000<<(a-1), 10000) + r.IntN(200) - 100
			src = "backoff"
		}
		status := ""
		if fl.status != 0 {
			status = fmt.Sprintf(`,"status":%d`, fl.status)
		}
		e.emit("RetryAttempt", fmt.Sprintf(`{"provider":"%s","model":"%s","attempt":%d,"maxAttempts":4,"failureType":"%s"%s,"errorMessage":"%s error from upstream","willRetry":%t,"delayMs":%d,"delaySource":"%s"}`,
			prov, model, a, fl.typ, status, fl.typ, will, delay, src))
	}
	fail := ""
	if !success {
		fail = `,"error":"retries exhausted","failureType":"overloaded"`
	}
	e.emit("ProviderRequestFinished", fmt.Sprintf(`{"provider":"%s","model":"%s","durationMs":%d,"success":%t,"retries":%d%s,"requestId":"req_%08x"}`,
		prov, model, 400+r.IntN(4000)+retries*1500, success, retries, fail, r.Uint32()))
	return model
}

// sideEvents writes what may follow a request: an L2 iteration with a
// repair, a step, a diagnosis or an escalation.
func (e *emitter) sideEvents(l2 bool, iter *int, model string) {
	r := e.r
	switch x := r.IntN(100); {
	case x < 4 && l2:
		*iter++
		e.emit("IterationStarted", fmt.Sprintf(`{"iteration":%d}`, *iter))
		e.emit("RepairAttempted", fmt.Sprintf(`{"iteration":%d}`, *iter))
		e.emit("VerificationFinished", `{"passed":false}`)
	case x < 6:
		e.emit("StepFinished", `{"judge":false}`)
	case x < 7:
		e.emit("DiagnosisStarted", `{}`)
		e.emit("DiagnosisCompleted", `{}`)
	case x == 7 && r.IntN(20) == 0:
		if l2 && r.IntN(2) == 0 {
			e.emit("RunEscalated", `{"from":"L2","to":"L3","reason":"non_improving"}`)
		} else {
			e.emit("RunEscalated", fmt.Sprintf(`{"from":"%s","to":"claude-opus-4-1","reason":"auto_after_retries","afterRetries":3}`, model))
		}
	}
}
