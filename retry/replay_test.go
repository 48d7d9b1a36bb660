package retry

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/retrylab/retrylab/retry/provider"
)

// TestReplay: Replay numbers a mix of faults as Retrier.Run's loop counts
// them: a re-send does not advance the backoff loop's count, a Restart
// loop starts it again, an InRequest loop backs off by the attempt's
// number in its request.
func TestReplay(t *testing.T) {
	st := func(s int) Classification {
		return Classify(&provider.Error{Provider: "anthropic", Kind: provider.KindHTTP, Status: s})
	}
	sse := func(prov string) Classification {
		return Classify(&provider.Error{Provider: prov, Kind: provider.KindSSEError, ErrorType: "api_error", Streamed: true})
	}
	cut := Classify(&provider.Error{Provider: "anthropic", Kind: provider.KindIncomplete, Streamed: true})
	type step struct {
		Attempt         int
		Resend, Restart bool
		Lo, Hi          time.Duration
	}
	tests := []struct {
		name   string
		preset string
		fails  []Classification
		want   []step
	}{
		{"claude-code 529 400 529", "claude-code", []Classification{st(529), st(400), st(529)},
			[]step{{Attempt: 1}, {Attempt: 2, Resend: true}, {Attempt: 2}}},
		{"claude-code 404 529 529", "claude-code", []Classification{st(404), st(529), st(529)},
			[]step{{Attempt: 1, Resend: true}, {Attempt: 1}, {Attempt: 2}}},
		{"claude-code cut 529 529", "claude-code", []Classification{cut, st(529), st(529)},
			[]step{{Attempt: 1, Resend: true, Restart: true, Lo: 500 * time.Millisecond, Hi: 625 * time.Millisecond}, {Attempt: 1}, {Attempt: 2}}},
		{"gemini-cli 503 sse 503", "gemini-cli", []Classification{st(503), sse("gemini"), st(503)},
			[]step{{Attempt: 1}, {Attempt: 2, Resend: true, Restart: true, Lo: time.Second, Hi: time.Second}, {Attempt: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := TestPolicies.Get(tt.preset)
			if err != nil {
				t.Fatal(err)
			}
			rp := p.NewReplay()
			var got []step
			for _, c := range tt.fails {
				s := rp.Fail(c)
				got = append(got, step{s.Attempt, s.Resend, s.Restart, s.Lo, s.Hi})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
		})
	}
}
