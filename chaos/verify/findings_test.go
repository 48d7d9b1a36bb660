package verify

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/trace"
)

// at is one hand-built server attempt of a findings test.
type at struct {
	fault  string
	status int
	typ    string         // failure type ("" for a success)
	ra     *time.Duration // Retry-After sent
	body   string
	gap    time.Duration // policy-time wait before the next attempt (-1: the request ends)
}

func ra(d time.Duration) *time.Duration { return &d }

// observed builds an Observed at timeScale 1 on an idle machine: the
// built-in client's own account of each wait, none late.
func observed(outcome string, as ...at) Observed {
	ob := Observed{Outcome: outcome, ServerAttempts: len(as), TimeScale: 1, ClientTrace: true}
	t := time.Unix(1000, 0)
	for k, a := range as {
		ob.ServerFaults = append(ob.ServerFaults, a.fault)
		ob.ServerStatuses = append(ob.ServerStatuses, a.status)
		ob.ServerArrived = append(ob.ServerArrived, t)
		t = t.Add(10 * time.Millisecond)
		ob.Facts = append(ob.Facts, attemptFacts{Ended: t, RetryAfter: a.ra, Type: a.typ, Body: cmpOr(a.body, "b")})
		ob.FailedAttempts = append(ob.FailedAttempts, a.typ != "")
		last := a.gap < 0 || a.typ == "" || k == len(as)-1
		ob.RequestEnds = append(ob.RequestEnds, last)
		if !last {
			ob.ServerWaits = append(ob.ServerWaits, Wait{After: k + 1, Gap: a.gap, Sleep: &SleepTiming{}})
			t = t.Add(a.gap)
		}
	}
	return ob
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func s529(gap time.Duration) at { return at{fault: "status", status: 529, typ: "overloaded", gap: gap} }
func ok() at                    { return at{fault: "ok", status: 200} }

func TestFindings(t *testing.T) {
	sc := &scenario.Scenario{}
	long := []at{}
	for range 12 {
		long = append(long, s529(time.Second))
	}
	long = append(long, ok())
	tests := []struct {
		name string
		ob   Observed
		want []string // codes raised, in order
		in   string   // a piece of the first finding's evidence
	}{
		{"retry-after waited", observed("success",
			at{fault: "status", status: 429, typ: "rate_limit", ra: ra(3 * time.Second), gap: 3 * time.Second}, ok()), nil, ""},
		{"retry-after ignored", observed("success",
			at{fault: "status", status: 429, typ: "rate_limit", ra: ra(3 * time.Second), gap: 400 * time.Millisecond}, ok()),
			[]string{"retry_after_ignored"}, "attempt 2 arrived 0.4s after a 429 with a Retry-After of 3s"},
		{"another model at once after a retry-after", func() Observed {
			ob := observed("success", at{fault: "status", status: 429, typ: "rate_limit", ra: ra(3 * time.Second), gap: 0}, ok())
			ob.ModelSwitches = []int{2}
			return ob
		}(), nil, ""},
		{"retry-after within the tolerance", observed("success",
			at{fault: "status", status: 429, typ: "rate_limit", ra: ra(3 * time.Second), gap: 2960 * time.Millisecond}, ok()), nil, ""},
		{"retry-after over the ceiling not waited", observed("success",
			at{fault: "status", status: 429, typ: "rate_limit", ra: ra(120 * time.Second), gap: time.Second}, ok()), nil, ""},
		{"400 retried unchanged", observed("success",
			at{fault: "status", status: 400, typ: "invalid_request", gap: time.Second}, ok()),
			[]string{"retried_non_retryable"}, "attempt 2 sent the same request again 1s after a 400 (invalid_request)"},
		{"400 that asked for a retry", func() Observed {
			ob := observed("success", at{fault: "status", status: 400, typ: "invalid_request", gap: time.Second}, ok())
			ob.Facts[0].ShouldRetry = true
			return ob
		}(), nil, ""},
		{"400 then a changed request", observed("success",
			at{fault: "contextOverflow", status: 400, typ: "context_too_long", gap: 0}, at{fault: "ok", status: 200, body: "smaller"}), nil, ""},
		{"400 ends the request, the next is new", observed("success",
			at{fault: "status", status: 400, typ: "invalid_request", gap: -1}, ok()), nil, ""},
		{"context overflow in a stream retried", observed("success",
			at{fault: "sseError", status: 200, typ: "context_too_long", gap: 500 * time.Millisecond}, ok()),
			[]string{"retried_non_retryable"}, "after a sseError (context_too_long)"},
		{"12 attempts", observed("success", long...), []string{"retry_storm", "no_backoff"}, "one request made 13 attempts (attempts 1–13), more than 11"},
		{"11 attempts with backoff", observed("success", s529(500*time.Millisecond), s529(time.Second), s529(2*time.Second), s529(4*time.Second),
			s529(8*time.Second), s529(8*time.Second), s529(8*time.Second), s529(8*time.Second), s529(8*time.Second), s529(8*time.Second), ok()), nil, ""},
		{"retries at once", observed("failure", s529(time.Millisecond), s529(2*time.Millisecond), s529(time.Millisecond), s529(0)),
			[]string{"retry_storm"}, "3 retries in a row with no wait: attempts 2–4"},
		{"two retries at once", observed("success", s529(time.Millisecond), s529(time.Millisecond), ok()), nil, ""},
		{"retry-after 0 at once", observed("success",
			at{fault: "status", status: 429, typ: "rate_limit", ra: ra(0), gap: 0}, at{fault: "status", status: 429, typ: "rate_limit", ra: ra(0), gap: 0},
			at{fault: "status", status: 429, typ: "rate_limit", ra: ra(0), gap: 0}, ok()), nil, ""},
		{"constant waits", observed("success", s529(time.Second), s529(time.Second), s529(1100*time.Millisecond), ok()),
			[]string{"no_backoff"}, "3 waits in a row after failures without Retry-After did not grow: 1s, 1s, 1.1s"},
		{"doubling waits", observed("success", s529(time.Second), s529(2*time.Second), s529(4*time.Second), ok()), nil, ""},
		{"linear waits", observed("success", s529(time.Second), s529(1500*time.Millisecond), s529(2*time.Second), ok()), nil, ""},
		{"two constant waits", observed("success", s529(time.Second), s529(time.Second), ok()), nil, ""},
		{"a cap reached", observed("success", s529(6*time.Second), s529(7*time.Second), s529(6500*time.Millisecond), ok()), nil, ""},
		{"same waits in three requests", observed("success", s529(time.Second), ok(), s529(time.Second), ok(), s529(time.Second), ok()),
			[]string{"no_jitter"}, "the same waits in every request (3 pairs compared): wait 1 after a 529: 1s, 1s, 1s"},
		{"jittered waits in three requests", observed("success", s529(time.Second), ok(), s529(900*time.Millisecond), ok(), s529(1300*time.Millisecond), ok()), nil, ""},
		{"same waits in two requests", observed("success", s529(time.Second), ok(), s529(time.Second), ok()), nil, ""},
		{"truncated answer taken", observed("success", at{fault: "truncate", status: 200, typ: "stream_interrupted"}),
			[]string{"truncated_stream_accepted"}, "attempt 1, the last, was cut"},
		{"truncated answer retried", observed("success", at{fault: "truncate", status: 200, typ: "stream_interrupted", gap: time.Second}, ok()), nil, ""},
		{"truncated answer, failure", observed("failure", at{fault: "truncate", status: 200, typ: "stream_interrupted"}), nil, ""},
		{"malformed answer taken", observed("success", at{fault: "malformed", status: 200, typ: "stream_parse"}),
			[]string{"malformed_chunk_ignored"}, "carried an event whose data is not JSON"},
		{"gave up on a short retry-after", observed("failure",
			at{fault: "status", status: 429, typ: "rate_limit", ra: ra(2 * time.Second), gap: 2 * time.Second},
			at{fault: "status", status: 429, typ: "rate_limit", ra: ra(2 * time.Second)}),
			[]string{"gave_up_early"}, "the client gave up after attempt 2 (2 of its request), a 429 with a Retry-After of 2s"},
		{"gave up on a long retry-after", observed("failure", at{fault: "status", status: 429, typ: "rate_limit", ra: ra(10 * time.Minute)}), nil, ""},
		{"gave up without retry-after", observed("failure", s529(time.Second), s529(-1)), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := Findings(tt.ob, sc)
			var got []string
			for _, f := range fs {
				if f.Evidence == "" || len(f.Attempts) == 0 {
					t.Errorf("finding without evidence or attempts: %+v", f)
				}
				if !slices.Contains(got, f.Code) {
					got = append(got, f.Code)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("codes = %v, want %v\n%+v", got, tt.want, fs)
			}
			if tt.in != "" && !strings.Contains(fs[0].Evidence, tt.in) {
				t.Errorf("evidence %q lacks %q", fs[0].Evidence, tt.in)
			}
		})
	}
}

func TestNoReadTimeout(t *testing.T) {
	ob := observed("failure", at{fault: "stall", status: 200, typ: "timeout"})
	if fs := Findings(ob, &scenario.Scenario{}); len(fs) != 0 {
		t.Fatalf("a client that gave up by itself: %+v", fs)
	}
	ob.ClientKilled = true
	fs := Findings(ob, &scenario.Scenario{})
	if len(fs) != 1 || fs[0].Code != "no_read_timeout" || !strings.Contains(fs[0].Evidence, "stopped at its deadline") {
		t.Fatalf("findings = %+v", fs)
	}
}

func TestNoJitterFromTrace(t *testing.T) {
	// The client's own recorded waits decide, to the millisecond.
	ob := observed("success", s529(time.Second), ok(), s529(time.Second), ok(), s529(time.Second), ok())
	for _, d := range []int64{1000, 1000, 1001} {
		ob.Retries = append(ob.Retries, trace.RetryAttempt{WillRetry: true, DelayMs: d})
	}
	if fs := noJitter(ob, &scenario.Scenario{}); len(fs) != 0 {
		t.Fatalf("waits 1ms apart in the trace: %+v", fs)
	}
	ob.Retries[2].DelayMs = 1000
	if fs := noJitter(ob, &scenario.Scenario{}); len(fs) != 1 {
		t.Fatalf("identical waits in the trace: %+v", fs)
	}
}

func TestNoFindingOnNoise(t *testing.T) {
	// A busy machine: 40ms of measured lateness around each gap, scale
	// 0.05: a retry at once cannot be told from a 1s wait, nor a 1s
	// wait from 1.1s.
	ob := observed("failure", s529(0), s529(0), s529(0), s529(0))
	ob.TimeScale = 0.05
	for i := range ob.ServerWaits {
		ob.ServerWaits[i].Sleep = nil
		ob.ServerWaits[i].Slack = 40 * time.Millisecond
		ob.ServerWaits[i].Gap = 2 * time.Millisecond
	}
	if fs := Findings(ob, &scenario.Scenario{}); len(fs) != 0 {
		t.Fatalf("findings on noise: %+v", fs)
	}
}

func TestStitchedAnswer(t *testing.T) {
	txt := wire.DefaultText
	cut := observed("success", at{fault: "drop", status: 200, typ: "stream_interrupted", gap: time.Second}, ok())
	tests := []struct {
		name, out string
		want      bool
	}{
		{"stitched", txt[:200] + txt, true},
		{"stitched after a label", "answer: " + txt[:40] + txt + "\n", true},
		{"whole answer", txt + "\n", false},
		{"two whole answers", txt + txt, false},
		{"a newline between", txt[:200] + "\n" + txt, false},
		{"a short beginning", txt[:10] + txt, false},
		{"nothing", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ob := cut
			ob.Stdout = tt.out
			fs := stitchedAnswer(ob, &scenario.Scenario{})
			if (len(fs) == 1) != tt.want {
				t.Fatalf("findings = %+v, want stitched %v", fs, tt.want)
			}
		})
	}
	ob := observed("success", ok())
	ob.Stdout = txt[:200] + txt
	if fs := stitchedAnswer(ob, &scenario.Scenario{}); len(fs) != 0 {
		t.Fatalf("no attempt was cut: %+v", fs)
	}
}

func TestFindingsCheck(t *testing.T) {
	fs := []Finding{{Code: "retry_storm", Attempts: []int{1}, Evidence: "e"}}
	tests := []struct {
		fe   scenario.FindingsExpect
		pass bool
		got  string
	}{
		{scenario.FindingsExpect{Present: []string{"retry_storm"}, Absent: []string{"no_jitter"}}, true, "retry_storm"},
		{scenario.FindingsExpect{Present: []string{"no_jitter"}}, false, "no_jitter not raised"},
		{scenario.FindingsExpect{Absent: []string{"retry_storm"}}, false, "retry_storm raised: e"},
	}
	for _, tt := range tests {
		c := FindingsCheck(tt.fe, fs)
		if c.Passed != tt.pass || c.Got != tt.got || c.Name != "findings" {
			t.Errorf("%+v: %+v", tt.fe, c)
		}
	}
}

func TestEveryCodeHasADetector(t *testing.T) {
	for _, c := range scenario.FindingCodes {
		if detectors[c.Code] == nil {
			t.Errorf("%s has no detector", c.Code)
		}
	}
	if len(detectors) != len(scenario.FindingCodes) {
		t.Errorf("%d detectors, %d codes", len(detectors), len(scenario.FindingCodes))
	}
}

func FuzzStitchAt(f *testing.F) {
	f.Add(wire.DefaultText[:100] + wire.DefaultText)
	f.Add("x")
	f.Fuzz(func(t *testing.T, out string) {
		at, n := stitchAt(out, wire.DefaultText, []string{wire.DefaultText})
		if at >= 0 && (n < StitchPrefix || out[at-n:at] != wire.DefaultText[:n]) {
			t.Fatalf("stitchAt(%q) = %d, %d", out, at, n)
		}
	})
}
