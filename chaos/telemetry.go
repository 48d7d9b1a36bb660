package chaos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/otlp"
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

// telemetryLimits bounds what each receiver keeps; zero fields take
// otlp's defaults. A variable for tests only.
var telemetryLimits otlp.Limits

// startTelemetry starts the receiver of the scenario whose run folder is dir
// ("": nothing is written).
func startTelemetry(dir string) (*telemetry, error) {
	t := &telemetry{dir: dir}
	rcv, err := otlp.Start(otlp.Config{Limits: telemetryLimits, Keep: t.keep})
	if err != nil {
		return nil, err
	}
	t.rcv = rcv
	return t, nil
}

// env is what the client is told: OTEL_EXPORTER_OTLP_ENDPOINT and each
// signal's endpoint (the harness owns them: client.env may not name them,
// ReservedEnv), and the protocol variables protocolEnv says must be set so
// that the client's exporters speak OTLP/HTTP. scenario is client.env (nil
// for chaos serve), whose own protocol, headers, timeouts and compression
// the client gets as they are; getenv looks up what the client gets of the
// runner's environment (os.Getenv for chaos serve, whose client is started
// by the user). Nil-safe.
func (t *telemetry) env(scEnv map[string]string, getenv func(string) string) []string {
	if t == nil {
		return nil
	}
	return append(t.rcv.Env(), protocolEnv(scEnv, getenv)...)
}

// protocolEnv returns the protocol variables the harness sets after
// client.env (scEnv), so that every exporter of the client speaks
// OTLP/HTTP, never gRPC. A variable client.env sets is the client's (the
// loader accepts only http/protobuf and http/json there) and is left
// alone; so is one the client inherits from the runner's environment
// (getenv: client.inheritEnv) set to an OTLP/HTTP protocol. Any other value the runner's
// environment has (grpc) is replaced: the general one by http/protobuf, a
// signal's by the general one's value. Unset, the general one is
// http/protobuf (the SDKs' default differs between languages), a
// signal's stays unset.
func protocolEnv(scEnv map[string]string, getenv func(string) string) []string {
	var out []string
	general := ""
	for i, name := range scenario.OTLPProtocolVars {
		v, set := scEnv[name]
		if !set {
			v = getenv(name)
		}
		switch {
		case set || slices.Contains(scenario.OTLPHTTPProtocols, v):
		case i == 0:
			v = scenario.OTLPHTTPProtocols[0]
			out = append(out, name+"="+v)
		case v != "":
			out = append(out, name+"="+general)
		}
		if i == 0 {
			general = v
		}
	}
	return out
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
		if err = runfolder.MakeRunSubdir(sub); err == nil {
			err = runfolder.WriteFileAtomic(filepath.Join(sub, fmt.Sprintf("%s-%04d.json", p.Signal, n)), append(b, '\n'))
		}
	}
	if err != nil && t.err == nil {
		t.err = err
	}
	return err
}

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
		for _, ev := range acc.Events(runID, verify.ClassifyReported) {
			line, err := json.Marshal(ev)
			if err != nil {
				werr = err
				break
			}
			buf.Write(append(line, '\n'))
		}
		if werr == nil {
			werr = runfolder.WriteFileAtomic(filepath.Join(t.dir, verify.ClientOtelFile), buf.Bytes())
		}
	}
	return &acc, st, errors.Join(cerr, t.err, werr)
}

// droppedWarning is the one line that says the receiver stopped keeping
// the client's exports past its bounds (Limits.Total, Limits.Items): they
// were answered 200, as the OTLP specification asks of a receiver that
// will not take more, so the client does not know; "" when none was
// dropped.
func (t *telemetry) droppedWarning(st otlp.Stats) string {
	if t == nil || st.Dropped == 0 {
		return ""
	}
	l := t.rcv.Limits()
	return fmt.Sprintf("warning: client telemetry: %d of %d export(s) (%d item(s)) answered 200 but not kept, past the receiver's bounds (%d MiB, %d items a client); selfReport reads only the %d kept",
		st.Dropped, st.Exports, st.DroppedItems, l.Total>>20, l.Items, st.Kept)
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

// startTelemetry starts the OTLP receiver of a scenario whose client is
// external (the built-in client sends no telemetry), registered by its run
// folder for runExternal; nil for the built-in client.
func (r *Runner) startTelemetry(sc *scenario.Scenario, dir string) (*telemetry, error) {
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

// telemetryEnv is the OTLP environment of sc's client running in dir,
// which inherits the names inherit of the runner's environment (no OTEL_
// variable of the runner's reaches a client unless it is named there).
func (r *Runner) telemetryEnv(sc *scenario.Scenario, dir string, inherit []string) []string {
	t, _ := r.tels.Load(dir)
	tel, _ := t.(*telemetry)
	return tel.env(sc.Client.Env, func(name string) string {
		if slices.Contains(inherit, name) {
			return os.Getenv(name)
		}
		return ""
	})
}

// finishTelemetry stops the scenario's receiver once its client has ended
// and returns the client's account (nil when it sent no telemetry a
// mapping reads as attempts) and the counts for result.json (nil when it
// sent nothing).
func (r *Runner) finishTelemetry(sc *scenario.Scenario, dir string, t *telemetry, runID, tracePath string) (*otlp.Account, *verify.Telemetry) {
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
	sum := &verify.Telemetry{Exports: st.Exports, Kept: st.Kept, Items: st.Items, Dropped: st.Dropped,
		DroppedItems: st.DroppedItems, Rejected: st.Rejected, Mapping: acc.Mapping,
		Attempts: len(acc.Attempts()), Unknown: acc.Unknown, Notes: acc.Notes}
	r.logf(sc.Name, "client telemetry: %d export(s), %d item(s), %d attempt(s) read by mapping %q, %d unused, %d export(s) dropped, %d rejected",
		st.Exports, st.Items, sum.Attempts, acc.Mapping, acc.Unknown, st.Dropped, st.Rejected)
	if w := t.droppedWarning(st); w != "" {
		r.logf(sc.Name, "%s", w)
	}
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
