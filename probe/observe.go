package probe

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
	"github.com/retrylab/retrylab/trace"
)

// Observation is what one probe scenario showed, in the client's policy
// time (wall clock divided by the time scale): the input of Infer.
type Observation struct {
	Fault  string `json:"fault"`
	Sample int    `json:"sample,omitempty"`
	Served int    `json:"served"` // attempts that met the fault before ok
	// Attempts the server saw.
	Attempts int `json:"attempts"`
	// End is how the client ended: succeeded, gave up, stopped (killed at
	// the deadline, still running), or not run (interrupted, error).
	End string `json:"end"`
	// WaitsMs are the gaps the server observed between the end of an
	// attempt and the arrival of the next, policy time.
	WaitsMs []float64 `json:"waitsMs"`
	// FirstAttemptMs is how long the first attempt lasted at the mock
	// (wall clock): for a hang, when the client gave up on it.
	FirstAttemptMs int64 `json:"firstAttemptMs,omitempty"`
	// DateLeadMs is, for an HTTP-date Retry-After, how far in the future
	// the date was when the response was sent (policy time).
	DateLeadMs float64 `json:"dateLeadMs,omitempty"`
	// NoiseMs is the measured noise on the run's waits: the largest
	// measured around one of its gaps (chaos DelaysMs.Noise: twice the
	// scheduling lateness around it plus the client's run-queue time), plus
	// the gap's residual (about 3 ms at worst), policy time.
	NoiseMs float64 `json:"noiseMs"`
	// Models are the models the probed request's attempts asked for, in
	// order (from the mock's journal).
	Models []string `json:"models,omitempty"`
	// WaitNoiseMs is the noise measured around each wait (chaos
	// DelaysMs.Noise plus the residual), policy time; empty when chaos did
	// not measure it per wait (NoiseMs then stands for each).
	WaitNoiseMs []float64 `json:"waitNoiseMs,omitempty"`
	// Round is the bisection round of a Retry-After ceiling probe, and
	// RetryAfterMs its value (policy time); 0 for the battery's probes.
	Round        int   `json:"round,omitempty"`
	RetryAfterMs int64 `json:"retryAfterMs,omitempty"`
	// DeadlineMs is the kill deadline (wall clock).
	DeadlineMs int64 `json:"deadlineMs"`
	// Note says why a probe has no result (interrupted, error).
	Note string `json:"note,omitempty"`
	// Client is how the client ended ("exit status 3", "killed after 10s:
	// still running at the deadline ...") and Stderr the end of its stderr
	// (one line, at most maxStderr bytes, control characters removed), set
	// when no probed attempt reached the mock: what the profile says it saw.
	Client string `json:"client,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	// WarmUpOnly: the warm-up request reached the mock, no probed attempt.
	WarmUpOnly bool `json:"warmUpOnly,omitempty"`
	// Unserved are the requests the mock answered 404 or 405 (a path or
	// method no wire format serves: "POST /v2/chat"), set when no attempt
	// reached it: the client reached the mock, on the wrong path.
	Unserved []string `json:"unserved,omitempty"`
}

// How a client ended.
const (
	EndSucceeded = "succeeded"
	EndGaveUp    = "gave up"
	EndStopped   = "stopped at the deadline"
	EndNotRun    = "not run"
)

// residualMs is the worst residual of a server-observed gap (chaos doc:
// the proxy's hand-off plus the client's connect, 1–3 ms on 2 cores).
const residualMs = 3

// Observe turns a probe's chaos result (and its server.jsonl) into an
// Observation.
func Observe(p Probe, r chaos.Result, scale float64) Observation {
	if scale <= 0 {
		scale = 1
	}
	ob := Observation{Fault: p.Fault.Name, Sample: p.Sample, Served: p.Served, Attempts: r.Attempts,
		DeadlineMs: p.Deadline.Milliseconds(), NoiseMs: noiseOf(r, scale)}
	if p.Round > 0 {
		ob.Round, ob.RetryAfterMs = p.Round, p.Fault.RetryAfterMs
	}
	switch {
	case r.Verdict == chaos.VerdictInterrupted || r.Verdict == chaos.VerdictError || r.Verdict == chaos.VerdictSkipped:
		ob.End = EndNotRun
		ob.Note = strings.TrimSpace(r.Interrupted + " " + r.Error + " " + r.SkipReason)
		return ob
	case p.WarmUp && r.Attempts == 1 && r.Outcome == "success":
		ob.End, ob.Attempts, ob.WarmUpOnly = EndNotRun, 0, true
		ob.Note = "the client made one request only: it does not read RETRYLAB_REQUESTS (run with --warm-up=false)"
		return ob
	case killed(r):
		ob.End = EndStopped
	case r.Outcome == "success":
		ob.End = EndSucceeded
	default:
		ob.End = EndGaveUp
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
	if ob.Attempts == 0 {
		ob.Client, ob.Stderr = clientEnd(r), stderrTail(filepath.Join(r.Dir, "stderr.txt"))
		ob.WarmUpOnly = r.Attempts > 0
		ob.Unserved = unservedIn(filepath.Join(r.Dir, "server.jsonl"))
	}
	resp, reqs := journal(filepath.Join(r.Dir, "server.jsonl"))
	for i, q := range reqs {
		if i >= first {
			ob.Models = append(ob.Models, q.Model)
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

// firstNoise is the noise around the first wait.
func (o Observation) firstNoise() float64 {
	if len(o.WaitNoiseMs) > 0 {
		return o.WaitNoiseMs[0]
	}
	return o.NoiseMs
}

// waitNoise is the noise of each wait: one figure per wait, NoiseMs
// where WaitNoiseMs has none.
func (o Observation) waitNoise() []float64 {
	out := make([]float64, len(o.WaitsMs))
	for i := range out {
		out[i] = o.NoiseMs
		if i < len(o.WaitNoiseMs) {
			out[i] = o.WaitNoiseMs[i]
		}
	}
	return out
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

// ms converts a duration to float milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
