package chaos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/retrylab/retrylab/otlp"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/provider"
)

// telemetry is one scenario's OTLP/HTTP receiver (package otlp): an
// external client is told its URL in OTEL_EXPORTER_OTLP_ENDPOINT, so what
// arrives there is that scenario's. Each export is kept in the run folder
// as it arrived, as OTLP/JSON (protobuf converted), one file per export:
// otlp/traces-0001.json, otlp/logs-0001.json, otlp/metrics-0001.json. The
// folder is scrubbed of keys with the rest of the run folder.
type telemetry struct {
	rcv *otlp.Receiver
	dir string // the scenario's run folder
	err error  // the first export that could not be written
}

// startTelemetry starts the receiver of the scenario whose run folder is dir
// ("": nothing is written).
func startTelemetry(dir string) (*telemetry, error) {
	t := &telemetry{dir: dir}
	rcv, err := otlp.Start(otlp.Config{Keep: t.keep})
	if err != nil {
		return nil, err
	}
	t.rcv = rcv
	return t, nil
}

// env is what the client is told: OTEL_EXPORTER_OTLP_ENDPOINT and each
// signal's endpoint, and OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf unless
// the environment already asks for OTLP over HTTP (the receiver speaks
// OTLP/HTTP, not gRPC). Nil-safe.
func (t *telemetry) env() []string {
	if t == nil {
		return nil
	}
	env := t.rcv.Env()
	if p := os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p == "" || p == "grpc" {
		env = append(env, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf")
	}
	return env
}

// keep writes one export to otlp/<signal>-NNNN.json (called in arrival
// order, under the receiver's lock).
func (t *telemetry) keep(p otlp.Payload, n int) error {
	if t.dir == "" {
		return nil
	}
	b, err := p.JSON()
	if err == nil {
		sub := filepath.Join(t.dir, "otlp")
		if err = makeRunSubdir(sub); err == nil {
			err = WriteFileAtomic(filepath.Join(sub, fmt.Sprintf("%s-%04d.json", p.Signal, n)), append(b, '\n'))
		}
	}
	if err != nil && t.err == nil {
		t.err = err
	}
	return err
}

// clientOtelFile is the scenario folder's trace v1 made of the client's
// telemetry, which `trace analyze` reads like any trace.
const clientOtelFile = "client-otel.jsonl"

// finish stops the receiver and reads the client's account from what
// arrived. With telemetry that a mapping reads, it writes the account as
// trace v1 to client-otel.jsonl, unless the client wrote its own trace (its
// requests would be counted twice). It returns nil when nothing arrived.
func (t *telemetry) finish(runID, tracePath string) (*otlp.Account, otlp.Stats, error) {
	if t == nil {
		return nil, otlp.Stats{}, nil
	}
	cerr := t.rcv.Close()
	st := t.rcv.Stats()
	if st.Exports == 0 {
		return nil, st, errors.Join(cerr, t.err)
	}
	acc := otlp.Read(otlp.Collect(t.rcv.Payloads()))
	var werr error
	if len(acc.Requests) > 0 && t.dir != "" && (tracePath == "" || !hasTrace(tracePath)) {
		var buf bytes.Buffer
		for _, ev := range acc.Events(runID, ClassifyReported) {
			line, err := json.Marshal(ev)
			if err != nil {
				werr = err
				break
			}
			buf.Write(append(line, '\n'))
		}
		if werr == nil {
			werr = WriteFileAtomic(filepath.Join(t.dir, clientOtelFile), buf.Bytes())
		}
	}
	return &acc, st, errors.Join(cerr, t.err, werr)
}

// hasTrace reports whether the client wrote a trace of its own.
func hasTrace(path string) bool {
	for _, p := range []string{path, path + ".gz"} {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			return true
		}
	}
	return false
}

// errorTypeRe finds a provider's error type in a client's error text
// ({"type":"overloaded_error"} in Claude Code's api_error).
var errorTypeRe = regexp.MustCompile(`"type"\s*:\s*"([a-z_]+_error)"`)

// ClassifyReported classifies a failed attempt as a client reported it
// (its status, error.type and message) with the retry core's classifier:
// the failure type the client's own account implies.
//
// An error.type that is itself one of retrylab's failure types (a client
// that classifies as the retry core does) is taken as it is.
func ClassifyReported(prov string, a otlp.Attempt) string {
	if a.Unreported() {
		return string(retry.Unknown)
	}
	if slices.Contains(retry.FailureTypes, retry.FailureType(a.ErrorType)) {
		return a.ErrorType
	}
	pe := &provider.Error{Provider: prov, Status: a.Status, Message: a.Error}
	if a.ErrorType != "" && !isDigits(a.ErrorType) {
		pe.ErrorType = a.ErrorType
	} else if m := errorTypeRe.FindStringSubmatch(a.Error); m != nil {
		pe.ErrorType = m[1]
	}
	low := strings.ToLower(a.Error + " " + a.ErrorType)
	switch {
	case a.Status != 0 && (a.Status < 200 || a.Status > 299):
		pe.Kind = provider.KindHTTP
	case pe.ErrorType != "":
		pe.Kind, pe.Status = provider.KindSSEError, 0
	case strings.Contains(low, "timeout") || strings.Contains(low, "timed out"):
		pe.Kind = provider.KindTimeout
	case a.Status >= 200 && a.Status <= 299:
		// An error after a 2xx: the response began, its stream broke
		// (Codex: "stream disconnected before completion: ...").
		pe.Kind = provider.KindIncomplete
	case strings.Contains(low, "reset"):
		pe.Kind = provider.KindReset
	case strings.Contains(low, "refused"):
		pe.Kind = provider.KindRefused
	case strings.Contains(low, "eof") || strings.Contains(low, "terminated") || strings.Contains(low, "ended"):
		pe.Kind = provider.KindEOF
	default:
		pe.Kind, pe.Status = provider.KindNetwork, 0
	}
	if pe.Kind != provider.KindHTTP {
		pe.Status = 0
	}
	return string(retry.Classify(pe).Type)
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// selfReportTypes are the failure types of the failed attempts of acc, in
// the order the client began them, as ClassifyReported reads them.
func selfReportTypes(acc *otlp.Account) []string {
	if acc == nil {
		return nil
	}
	type typed struct {
		at otlp.Attempt
		ft string
	}
	var ts []typed
	for _, r := range acc.Requests {
		for _, a := range r.Attempts {
			if a.Failed() {
				ts = append(ts, typed{a, ClassifyReported(r.Provider, a)})
			}
		}
	}
	slices.SortStableFunc(ts, func(x, y typed) int { return x.at.Start.Compare(y.at.Start) })
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.ft)
	}
	return out
}

// startTelemetry starts the OTLP receiver of a scenario whose client is
// external (the built-in client sends no telemetry), registered by its run
// folder for runExternal; nil for the built-in client.
func (r *Runner) startTelemetry(sc *Scenario, dir string) (*telemetry, error) {
	if r.ClientCmd == "" && len(sc.Client.Command) == 0 {
		return nil, nil
	}
	t, err := startTelemetry(dir)
	if err != nil {
		return nil, err
	}
	r.tels.Store(dir, t)
	return t, nil
}

// telemetryEnv is the OTLP environment of the client running in dir.
func (r *Runner) telemetryEnv(dir string) []string {
	t, _ := r.tels.Load(dir)
	tel, _ := t.(*telemetry)
	return tel.env()
}

// finishTelemetry stops the scenario's receiver once its client has ended
// and returns the client's account (nil when it sent no telemetry a
// mapping reads as attempts) and the counts for result.json (nil when it
// sent nothing).
func (r *Runner) finishTelemetry(sc *Scenario, dir string, t *telemetry, runID, tracePath string) (*otlp.Account, *Telemetry) {
	if t == nil {
		return nil, nil
	}
	r.tels.Delete(dir)
	acc, st, err := t.finish(runID, tracePath)
	if err != nil {
		r.logf(sc.Name, "client telemetry: %v", err)
	}
	if acc == nil {
		return nil, nil
	}
	sum := &Telemetry{Exports: st.Exports, Kept: st.Kept, Items: st.Items, Dropped: st.Dropped,
		DroppedItems: st.DroppedItems, Rejected: st.Rejected, Mapping: acc.Mapping,
		Attempts: len(acc.Attempts()), Unknown: acc.Unknown, Notes: acc.Notes}
	r.logf(sc.Name, "client telemetry: %d export(s), %d item(s), %d attempt(s) read by mapping %q, %d unused, %d export(s) dropped",
		st.Exports, st.Items, sum.Attempts, acc.Mapping, acc.Unknown, st.Dropped)
	for _, n := range acc.Notes {
		r.logf(sc.Name, "client telemetry: note: %s", n)
	}
	if len(acc.Requests) == 0 {
		// Telemetry no mapping reads (metrics alone, say) is kept and
		// counted, and says nothing of the attempts: no selfReport.
		return nil, sum
	}
	return acc, sum
}
