package battery

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/probe"
	"github.com/retrylab/retrylab/trace"
)

// residualMs is the worst residual of a server-observed gap (chaos doc:
// the proxy's hand-off plus the client's connect, 1–3 ms on 2 cores).
const residualMs = 3

// Observe turns a probe's chaos result (and its server.jsonl) into an
// Observation.
func Observe(p Probe, r chaos.Result, scale float64) probe.Observation {
	if scale <= 0 {
		scale = 1
	}
	ob := probe.Observation{Fault: p.Fault.Name, Sample: p.Sample, Served: p.Served, Attempts: r.Attempts,
		DeadlineMs: p.Deadline.Milliseconds(), NoiseMs: noiseOf(r, scale)}
	if p.Round > 0 {
		ob.Round, ob.RetryAfterMs = p.Round, p.Fault.RetryAfterMs
	}
	ob.Outage, ob.Check, ob.OutageMs = p.Outage, p.Check, p.OutageMs
	switch {
	case r.Verdict == chaos.VerdictInterrupted || r.Verdict == chaos.VerdictError || r.Verdict == chaos.VerdictSkipped:
		ob.End = probe.EndNotRun
		ob.Note = strings.TrimSpace(r.Interrupted + " " + r.Error + " " + r.SkipReason)
		return ob
	case p.WarmUp && r.Attempts == 1 && r.Outcome == "success":
		ob.End, ob.Attempts, ob.WarmUpOnly = probe.EndNotRun, 0, true
		ob.Note = "the client made one request only: it does not read RETRYLAB_REQUESTS (run with --warm-up=false)"
		return ob
	case killed(r):
		ob.End = probe.EndStopped
	case r.Outcome == "success":
		ob.End = probe.EndSucceeded
	default:
		ob.End = probe.EndGaveUp
	}
	for _, g := range r.DelaysMs.Server {
		ob.WaitsMs = append(ob.WaitsMs, float64(g)/scale)
	}
	for _, n := range r.DelaysMs.Noise {
		ob.WaitNoiseMs = append(ob.WaitNoiseMs, float64(n+residualMs)/scale)
	}
	first := 0
	if p.WarmUp {
		first = 1
		ob.Attempts = max(0, r.Attempts-1)
	}
	if ob.End == probe.EndSucceeded && metOnlyFaults(p, ob.Attempts) {
		// The mock served no ok: an exit status of 0 says nothing of the
		// request (aider exits 0 after giving up, its failure in its
		// output only), so the run is read as the give-up it was.
		ob.End = probe.EndGaveUp
		ob.Note = fmt.Sprintf("exit status 0, but each of its %d attempt(s) met the fault and none an ok: read as a give-up", ob.Attempts)
	}
	if ob.Attempts == 0 {
		ob.Client, ob.Stderr = clientEnd(r), stderrTail(filepath.Join(r.Dir, "stderr.txt"))
		ob.WarmUpOnly = r.Attempts > 0
		ob.Unserved = unservedIn(filepath.Join(r.Dir, "server.jsonl"))
	}
	resp, reqs := journal(filepath.Join(r.Dir, "server.jsonl"))
	for i, q := range reqs {
		if i >= first {
			ob.Models = append(ob.Models, q.Model)
			if t0 := reqs[first].ArrivedAt; !q.ArrivedAt.IsZero() && !t0.IsZero() {
				ob.ArrivalsMs = append(ob.ArrivalsMs, float64(q.ArrivedAt.Sub(t0))/float64(time.Millisecond)/scale)
			}
		}
	}
	if len(resp) > first {
		a := resp[first]
		ob.FirstAttemptMs = a.DurationMs
		if date, err := http.ParseTime(a.RetryAfter); p.Fault.HTTPDate && err == nil && !a.FinishedAt.IsZero() {
			ob.DateLeadMs = float64(date.Sub(a.FinishedAt).Milliseconds()) / scale
		}
	}
	return ob
}

// metOnlyFaults reports whether a run of p whose client made attempts
// probed attempts met the fault every time: the fault is served Served
// times, then ok. A run without a count served (a survival check, whose
// outage is a length of time) says nothing.
func metOnlyFaults(p Probe, attempts int) bool {
	return p.Served > 0 && attempts >= 1 && attempts <= p.Served
}

// noiseOf is the noise of a run's waits: the largest measured around one
// of its gaps (chaos DelaysMs.Noise), else twice the scenario's lateness,
// plus the residual, in policy time.
func noiseOf(r chaos.Result, scale float64) float64 {
	n := 2 * r.LatenessMs
	if len(r.DelaysMs.Noise) > 0 {
		n = 0
		for _, x := range r.DelaysMs.Noise {
			n = max(n, x)
		}
	}
	return float64(n+residualMs) / scale
}

// clientEnd says how the client ended: the "client" check's problem
// (killed at the deadline, crashed), else its exit status.
func clientEnd(r chaos.Result) string {
	for _, c := range r.Checks {
		if c.Name == "client" && c.Got != "" {
			return c.Got
		}
	}
	if r.ExitCode != nil {
		return fmt.Sprintf("exit status %d", *r.ExitCode)
	}
	return ""
}

// maxStderr bounds the client's stderr quoted in a profile.
const maxStderr = 300

// stderrTail is the end of the client's stderr.txt (redacted by chaos):
// its last lines, joined with " / ", at most maxStderr bytes, control
// characters and invalid UTF-8 removed so that a profile printed on a
// terminal carries no escape sequence. "" when the file is missing,
// empty or not a regular file.
func stderrTail(path string) string {
	f, err := runfolder.OpenRunFile(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const window = 4096
	if fi, err := f.Stat(); err == nil && fi.Size() > window {
		if _, err := f.Seek(fi.Size()-window, io.SeekStart); err != nil {
			return ""
		}
	}
	data, _ := io.ReadAll(io.LimitReader(f, window))
	return tailLine(string(data), maxStderr)
}

// tailLine is the end of text as one printable line of at most n bytes:
// its non-empty lines joined with " / ", control characters dropped.
func tailLine(text string, n int) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == utf8.RuneError, unicode.IsControl(r), r == '\u2028', r == '\u2029':
			return -1
		}
		return r
	}, strings.ToValidUTF8(text, ""))
	var lines []string
	for _, l := range strings.Split(clean, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	out := strings.Join(lines, " / ")
	if len(out) <= n {
		return out
	}
	cut := len(out) - n
	for cut < len(out) && !utf8.RuneStart(out[cut]) {
		cut++
	}
	return "…" + out[cut:]
}

// killed reports whether the client was stopped at its deadline.
func killed(r chaos.Result) bool {
	for _, c := range r.Checks {
		if c.Name == "client" && strings.HasPrefix(c.Got, "killed after") {
			return true
		}
	}
	return false
}

// journal reads the MockResponse and MockRequest events of attempts (not
// side requests) from a server.jsonl, in order; a missing or unreadable
// file gives none, and so does anything but a regular file: the run folder
// is the client's, and a FIFO it put there blocked a plain open for ever.
func journal(path string) (resps []trace.MockResponse, reqs []trace.MockRequest) {
	f, err := runfolder.OpenRunFile(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var ev trace.Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch ev.Type {
		case trace.TypeMockResponse:
			var mr trace.MockResponse
			if json.Unmarshal(ev.Payload, &mr) == nil && mr.Attempt >= 1 {
				resps = append(resps, mr)
			}
		case trace.TypeMockRequest:
			var mq trace.MockRequest
			if json.Unmarshal(ev.Payload, &mq) == nil && mq.Attempt >= 1 {
				reqs = append(reqs, mq)
			}
		}
	}
	return resps, reqs
}

// unservedIn lists the side requests of a server.jsonl the mock answered
// 404 or 405 ("METHOD path", each once, in order; the path as the mock
// journalled it, secrets redacted).
func unservedIn(path string) []string {
	f, err := runfolder.OpenRunFile(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var ev trace.Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Type != trace.TypeMockRequest {
			continue
		}
		var mq trace.MockRequest
		if json.Unmarshal(ev.Payload, &mq) != nil || !mq.Side || (mq.Status != http.StatusNotFound && mq.Status != http.StatusMethodNotAllowed) {
			continue
		}
		r := tailLine(mq.Method+" "+mq.Path, 120)
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
