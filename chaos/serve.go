package chaos

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/redact"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/trace"
)

// ServeVerdict is what `chaos serve` saw, from the server's side only.
type ServeVerdict struct {
	// Attempts are the records the server kept: every attempt up to
	// 2×serveKeep, else the first and the last serveKeep (Seen says how
	// many there were).
	Attempts []mock.ServerAttempt
	Seen     int
	// Tally counts the attempts that ended, by fault and status: all of
	// them.
	Tally map[mock.TallyKey]int
	// Gaps[i] is the wait between the end of attempt i+1 and the arrival of
	// attempt i+2, as the server saw it.
	Gaps []time.Duration
	// Checks are the scenario's expectations that the server side can
	// check (see serveChecks); Skipped names those it cannot.
	Checks  []verify.Check
	Skipped []string
	// Findings are what the journal shows of the client without being
	// asked (serveFindings).
	Findings []verify.Finding
}

// Failed reports whether a check failed or could not tell (inconclusive);
// an unverified check is not a failure.
func (v ServeVerdict) Failed() bool {
	for _, c := range v.Checks {
		if c.State == verify.StateFail || c.State == verify.StateInconclusive {
			return true
		}
	}
	return false
}

// serverChecks are the checks serveChecks keeps.
var serverChecks = map[string]bool{"outcome": true, "attempts": true, "failureTypes": true, "delays": true, "delays.server": true, "escalations": true}

// serveChecks evaluates sc's expect against what the server saw, with the
// same evaluate as `chaos run`, keeping only what the server side can tell:
// outcome (failure when the last attempt failed; success when it succeeded
// and the scenario has one request; else skipped), attempts, failureTypes
// (inferred from the faults), delays (the server's gaps), escalations (the
// model switches the journal saw, as for a client without a trace).
// maxDuration and the client's own delays need the client's run and are
// skipped.
func serveChecks(sc *scenario.Scenario, attempts []mock.ServerAttempt) (checks []verify.Check, skipped []string) {
	sc, ob := serveObserved(sc, attempts)
	only := *sc
	ex := sc.Expect
	switch {
	case ex.Outcome == verify.OutcomeStillRetrying:
		// Serve ends when it is stopped, not at a deadline of the client's:
		// a client still retrying then looks like one that gave up.
		skipped = append(skipped, "outcome (still_retrying cannot be told from the server)")
		ex.Outcome = ""
	case ex.Outcome != "" && ob.Outcome == "":
		skipped = append(skipped, "outcome (cannot be told from the server)")
		ex.Outcome = ""
	}
	if ex.MaxDuration > 0 {
		skipped = append(skipped, "maxDuration (needs the client's run)")
		ex.MaxDuration = 0
	}
	only.Expect = ex
	env, err := verify.EnvelopeFor(sc)
	if err != nil {
		return []verify.Check{{Name: "delays", Want: "a policy to check against", Got: err.Error(), Where: "client.policy"}}, skipped
	}
	for _, c := range verify.Evaluate(&only, ob, env) {
		if serverChecks[c.Name] {
			if c.Name == "outcome" {
				// evaluate names the client's trace; serve has none.
				c.Where = lastAttemptWhere(attempts)
			}
			checks = append(checks, c)
		} else {
			skipped = append(skipped, c.Name+" (client side)")
		}
	}
	return checks, skipped
}

// serveObserved is what the server saw of sc's attempts, as the checks and
// the finding detectors read it, with the outcome the last attempt tells
// (serveChecks), and sc with its outage's draws as the attempts met them.
func serveObserved(sc *scenario.Scenario, attempts []mock.ServerAttempt) (*scenario.Scenario, verify.Observed) {
	sc = verify.Met(sc, attempts)
	scale := sc.TimeScale
	if scale <= 0 {
		scale = 1
	}
	ob, _ := verify.Observe(sc, attempts, "", scale)
	if n := len(attempts); n > 0 {
		switch {
		case !mock.Succeeded(attempts[n-1]):
			ob.Outcome = verify.OutcomeFailure
		case sc.Requests <= 1:
			ob.Outcome = verify.OutcomeSuccess
		}
	}
	return sc, ob
}

// serveFindings are the findings of what the server saw, by the detectors
// of chaos run (verify.Findings) over the journal alone: serve has no
// client trace, output or deadline, so the findings that need them
// (no_read_timeout, a client stopped at its deadline; stitched_answer, its
// output) are not raised here.
func serveFindings(sc *scenario.Scenario, attempts []mock.ServerAttempt) []verify.Finding {
	sc, ob := serveObserved(sc, attempts)
	return verify.Findings(ob, sc)
}

// lastAttemptWhere says where serve's outcome comes from: the status of the
// last attempt in the journal.
func lastAttemptWhere(attempts []mock.ServerAttempt) string {
	if len(attempts) == 0 {
		return "server journal: no attempts"
	}
	a := attempts[len(attempts)-1]
	status := "no status"
	if a.Status != 0 {
		status = fmt.Sprintf("status %d", a.Status)
	}
	if a.Fault != "" && a.Fault != scenario.FaultStatus {
		status = a.Fault + ", " + status
	}
	return fmt.Sprintf("server journal: last attempt (%d: %s)", a.N, status)
}

// serveKeep bounds the attempt records a long `chaos serve` holds
// (mock.EnvConfig.KeepAttempts): about 2 × 1,000 × 300 B at most.
const serveKeep = 1000

// verdictLines is how many attempts the verdict prints one line for, the
// first half and the last half of them; the others are in its counts.
const verdictLines = 40

// newServeVerdict computes the verdict of a list of attempts.
func newServeVerdict(attempts []mock.ServerAttempt) ServeVerdict {
	v := ServeVerdict{Attempts: attempts, Seen: len(attempts)}
	for i := 1; i < len(attempts); i++ {
		prev := attempts[i-1]
		if prev.Ended.IsZero() || attempts[i].N != prev.N+1 {
			v.Gaps = append(v.Gaps, 0)
			continue
		}
		v.Gaps = append(v.Gaps, attempts[i].Arrived.Sub(prev.Ended))
	}
	return v
}

// Write prints the verdict for people: how many attempts, with their count
// by fault and status, then one line per attempt (the first and the last
// verdictLines/2 when there are more) with the fault it met, its status
// and who closed it, and the gap before the next attempt.
// Everything a request could put in it (paths, models, the checks' texts)
// goes through printable: a client cannot move the terminal's cursor,
// recolour it, reorder its text or start a line of its own.
func (v ServeVerdict) Write(w io.Writer) error {
	seen := max(v.Seen, len(v.Attempts))
	if _, err := fmt.Fprintf(w, "server saw %d attempt(s)%s\n", seen, tallyText(v.Tally)); err != nil {
		return err
	}
	for i, a := range v.Attempts {
		if n := len(v.Attempts); n > verdictLines && i >= verdictLines/2 && i < n-verdictLines/2 {
			if i == verdictLines/2 {
				if _, err := fmt.Fprintf(w, "  … %d attempt(s) not shown …\n", seen-verdictLines); err != nil {
					return err
				}
			}
			continue
		}
		if _, err := fmt.Fprintln(w, v.attemptLine(i, a)); err != nil {
			return err
		}
	}
	for _, c := range v.Checks {
		line := fmt.Sprintf("%s %s: want %s, got %s", strings.ToUpper(c.State), mock.Printable(c.Name), mock.Printable(c.Want), mock.Printable(c.Got))
		if c.Where != "" {
			line += " (" + mock.Printable(c.Where) + ")"
		}
		if c.Hint != "" {
			line += "\n  hint: " + mock.Printable(c.Hint)
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	for _, s := range v.Skipped {
		if _, err := fmt.Fprintln(w, "SKIP "+mock.Printable(s)); err != nil {
			return err
		}
	}
	for _, f := range v.Findings {
		if _, err := fmt.Fprintf(w, "FINDING %s (attempts %s): %s\n", mock.Printable(f.Code), attemptList(f.Attempts), mock.Printable(f.Evidence)); err != nil {
			return err
		}
	}
	return nil
}

// attemptList prints attempt numbers: "1, 2, 3".
func attemptList(ks []int) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = fmt.Sprint(k)
	}
	return strings.Join(s, ", ")
}

// tallyText is ": 998 ok 200, 2 status 529" for the attempts that ended,
// most frequent first, or "" when none did.
func tallyText(t map[mock.TallyKey]int) string {
	keys := make([]mock.TallyKey, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b mock.TallyKey) int {
		if t[a] != t[b] {
			return t[b] - t[a]
		}
		return cmp.Or(strings.Compare(a.Fault, b.Fault), a.Status-b.Status)
	})
	var parts []string
	for _, k := range keys {
		status := "-"
		if k.Status != 0 {
			status = fmt.Sprint(k.Status)
		}
		parts = append(parts, fmt.Sprintf("%d %s %s", t[k], mock.Printable(k.Fault), status))
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ", ")
}

// attemptLine is the verdict's line of attempt a, the i-th.
func (v ServeVerdict) attemptLine(i int, a mock.ServerAttempt) string {
	status := "-"
	if a.Status != 0 {
		status = fmt.Sprint(a.Status)
	}
	line := fmt.Sprintf("  attempt %d: %-8s status %-3s %6d bytes  %8s  closed by %s",
		a.N, a.Fault, status, a.Bytes, a.Ended.Sub(a.Arrived).Round(time.Millisecond), a.ClosedBy)
	if a.Ended.IsZero() {
		line = fmt.Sprintf("  attempt %d: %-8s (still open)", a.N, a.Fault)
	}
	if a.Model != "" || a.Path != "" {
		line += fmt.Sprintf("  %s %s", mock.Printable(a.Path), mock.Printable(a.Model))
	}
	if i < len(v.Gaps) {
		line += fmt.Sprintf("\n    wait before attempt %d: %s", a.N+1, v.Gaps[i].Round(time.Millisecond))
	}
	return line
}

// Serve starts an Env for sc behind toxi and an OTLP receiver, prints
// ANTHROPIC_BASE_URL=..., OPENAI_BASE_URL=..., GOOGLE_GEMINI_BASE_URL=...
// and OTEL_EXPORTER_OTLP_*=... on stdout, journals to journalPath (if not ""; its
// folder is created), runs until ctx ends, then prints the server-side
// verdict on stdout, with PASS/FAIL for each check of sc's expect that the
// server side can make (serveChecks), and selfReport when the client sent
// telemetry (kept beside the journal, in otlp/ and client-otel.jsonl), and
// returns it. Progress lines go to stderr. As in a run folder, the keys
// the client sent are scrubbed from the journal, the telemetry kept and the
// verdict, and what came from a request is printed without control or
// invisible characters (printable).
func Serve(ctx context.Context, sc *scenario.Scenario, toxi *mock.Toxiproxy, journalPath string, stdout, stderr io.Writer) (ServeVerdict, error) {
	return ServeWith(ctx, sc, toxi, ServeOptions{Journal: journalPath}, stdout, stderr)
}

// ServeOptions are chaos serve's flags.
type ServeOptions struct {
	Journal string // the journal's path; "": none
	Verbose bool   // a [mock] line per attempt on stderr
	// EnvFile, when set, receives the same KEY=VALUE lines serve prints,
	// written whole (a temporary file renamed into place) once the
	// servers listen: a test harness waits for the file to appear and
	// reads it, rather than parsing stdout.
	EnvFile string
	// Proxy says whether the client goes through Toxiproxy (--proxy;
	// mock.EnvConfig.Proxy).
	Proxy mock.ProxyMode
}

// ServeWith is Serve with its options. Its memory is bounded whatever
// the number of attempts: the Env keeps the first and the last serveKeep
// records and counts the rest; the server-side checks need every attempt,
// so past 2×serveKeep they are skipped.
func ServeWith(ctx context.Context, sc *scenario.Scenario, toxi *mock.Toxiproxy, opt ServeOptions, stdout, stderr io.Writer) (ServeVerdict, error) {
	journalPath := opt.Journal
	runID := "serve-" + time.Now().UTC().Format("20060102T150405Z")
	journal, err := createServeJournal(journalPath, runID)
	if err != nil {
		return ServeVerdict{}, err
	}
	defer journal.Close()
	sec := redact.NewSecrets()
	// The [mock] lines are scrubbed of the keys learnt so far too: a key
	// that looks like no known key (learnt from x-api-key) may come back
	// in a later request's path.
	env, err := mock.StartEnv(ctx, mock.EnvConfig{Scenario: sc, Toxi: toxi, Journal: journal, RunID: runID, Log: scrubWriter{stderr, sec}, OnSecret: sec.Add,
		TimeScale: sc.TimeScale, KeepAttempts: serveKeep, QuietAttempts: !opt.Verbose, Fleet: sc.FleetClients(), Proxy: opt.Proxy})
	if err != nil {
		return ServeVerdict{}, err
	}
	dir := ""
	if journalPath != "" {
		dir = filepath.Dir(journalPath)
	}
	tel, err := startTelemetry(dir)
	if err != nil {
		env.Close()
		return ServeVerdict{}, fmt.Errorf("chaos serve: %w", err)
	}
	clientEnv := append(env.ClientEnv(), tel.env(nil, os.Getenv)...)
	if opt.EnvFile != "" {
		if err := writeEnvFile(opt.EnvFile, clientEnv); err != nil {
			env.Close()
			_ = tel.rcv.Close()
			return ServeVerdict{}, fmt.Errorf("chaos serve: --env-file: %w", err)
		}
	}
	// After the file: whoever reads these lines finds the file there too.
	for _, kv := range clientEnv {
		fmt.Fprintln(stdout, kv)
	}
	then := "then ok"
	if o := sc.Outage; o != nil {
		then = fmt.Sprintf("then an outage of %d phase(s) over %s from the first attempt (seed %d), then ok", len(o.Phases), o.Total(), o.SeedOr(0))
	}
	fmt.Fprintf(stderr, "serving scenario %q (%d fault(s), %s; path: %s); press Ctrl-C to stop\n", sc.Name, len(sc.Attempts), then, env.Path())
	<-ctx.Done()
	closeErr := env.Close()
	v := newServeVerdict(env.Attempts())
	v.Seen, v.Tally = env.AttemptsSeen(), env.Tally()
	if v.Seen > len(v.Attempts) {
		v.Skipped = append(v.Skipped, fmt.Sprintf("every check (the server kept the first and last %d of %d attempts; checks need them all)", serveKeep, v.Seen),
			"findings (they read every attempt too)")
	} else {
		v.Checks, v.Skipped = serveChecks(sc, v.Attempts)
		v.Findings = serveFindings(sc, v.Attempts)
	}
	if c, ok := serveSelfReport(sc, v.Attempts, tel, runID, sec, stderr); ok && v.Seen == len(v.Attempts) {
		v.Checks = append(v.Checks, c)
	}
	if err := env.JournalErr(); err != nil {
		v.Checks = append(v.Checks, verify.Check{Name: "journal", Want: "every attempt journaled", Got: err.Error(), Where: journalPath})
	}
	if journalPath != "" {
		if err := errors.Join(journal.Close(), redact.ScrubFile(journalPath, sec)); err != nil {
			fmt.Fprintf(stderr, "chaos serve: scrubbing keys from the journal: %v\n", mock.Printable(sec.Scrub(err.Error())))
		}
	}
	var out bytes.Buffer
	_ = v.Write(&out) // a bytes.Buffer does not fail
	_, werr := io.WriteString(stdout, sec.Scrub(out.String()))
	return v, errors.Join(closeErr, werr)
}

// writeEnvFile writes the KEY=VALUE lines to path through a temporary
// file in the same folder renamed into place, so a reader that sees the
// file sees all of it.
func writeEnvFile(path string, kvs []string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".retrylab-env-*")
	if err != nil {
		return err
	}
	_, werr := io.WriteString(f, strings.Join(kvs, "\n")+"\n")
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// createServeJournal creates serve's journal at path, and its folder; nil
// when path is "".
func createServeJournal(path, runID string) (*trace.Writer, error) {
	if path == "" {
		return nil, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("chaos serve: journal: %w", err)
	}
	w, err := trace.Create(path, runID)
	if err != nil {
		return nil, fmt.Errorf("chaos serve: journal: %w", err)
	}
	return w, nil
}

// serveSelfReport stops serve's OTLP receiver and, when the client sent
// telemetry a mapping reads, holds its account against the journal. What
// arrived is scrubbed of the keys the client sent and anything that looks
// like a key, as run files are.
func serveSelfReport(sc *scenario.Scenario, attempts []mock.ServerAttempt, tel *telemetry, runID string, sec *redact.Secrets, stderr io.Writer) (verify.Check, bool) {
	acc, st, err := tel.finish(runID, "")
	if err != nil {
		fmt.Fprintf(stderr, "client telemetry: %v\n", mock.Printable(sec.Scrub(err.Error())))
	}
	if w := tel.droppedWarning(st); w != "" {
		fmt.Fprintln(stderr, w)
	}
	if tel.dir != "" && st.Kept > 0 {
		for _, p := range []string{filepath.Join(tel.dir, "otlp"), filepath.Join(tel.dir, verify.ClientOtelFile)} {
			if err := sec.ScrubDir(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				fmt.Fprintf(stderr, "client telemetry: scrubbing keys: %v\n", err)
			}
		}
	}
	if acc == nil || len(acc.Requests) == 0 {
		return verify.Check{}, false
	}
	scale := sc.TimeScale
	if scale <= 0 {
		scale = 1
	}
	ob, _ := verify.Observe(verify.Met(sc, attempts), attempts, "", scale)
	ob.SelfReport = acc
	ob.Telemetry = &verify.Telemetry{Exports: st.Exports, Kept: st.Kept, Items: st.Items, Dropped: st.Dropped, DroppedItems: st.DroppedItems, Rejected: st.Rejected}
	c := verify.SelfReportCheck(ob)
	c.Where = strings.Replace(c.Where, "server.jsonl", "the journal", 1)
	return verify.Settle([]verify.Check{c})[0], true
}

// scrubWriter writes each Write (one [mock] line) scrubbed of the keys sec
// has learnt.
type scrubWriter struct {
	w   io.Writer
	sec *redact.Secrets
}

func (s scrubWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, s.sec.Scrub(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
