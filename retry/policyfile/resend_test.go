package policyfile

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/retry"
)

// TestResendsYAML: resends, shouldRetryIgnored and the new retryAfter
// keys parse, render and parse back; a resend that matches nothing is an
// error.
func TestResendsYAML(t *testing.T) {
	src := `preset: gemini-cli
shouldRetryIgnored: [503]
resends:
  - {statuses: [400, 404], maxAttempts: 3}
  - {streamed: true, types: [overloaded], restart: true, maxAttempts: 2, initialDelay: 1s, kind: constant}
retryAfter: {integerPart: true, nominalFloor: true, noDate: true}
`
	p, err := Parse([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []retry.Resend{
		{Statuses: []int{400, 404}, Strategy: retry.Strategy{Retry: true, MaxAttempts: 3, Multiplier: 2, Kind: retry.NoBackoff, Jitter: retry.NoJitter}},
		{Streamed: true, Types: []retry.FailureType{retry.Overloaded}, Restart: true,
			Strategy: retry.Strategy{Retry: true, MaxAttempts: 2, InitialDelay: time.Second, Multiplier: 2, Kind: retry.Constant, Jitter: retry.NoJitter}},
	}
	if diff := cmp.Diff(want, p.Resends); diff != "" {
		t.Errorf("Resends mismatch (-want +got):\n%s", diff)
	}
	if !p.RetryAfter.IntegerPart || !p.RetryAfter.NominalFloor || !p.RetryAfter.NoDate || len(p.ShouldRetryIgnored) != 1 {
		t.Errorf("retryAfter/shouldRetryIgnored not read: %+v %v", p.RetryAfter, p.ShouldRetryIgnored)
	}
	q, err := Parse([]byte(p.String()), "again.yaml")
	if err != nil {
		t.Fatalf("rendering does not parse back: %v\n%s", err, p.String())
	}
	if diff := cmp.Diff(p.String(), q.String()); diff != "" {
		t.Errorf("String round trip mismatch (-want +got):\n%s", diff)
	}
	_, err = Parse([]byte("resends: [{maxAttempts: 2}]\n"), "bad.yaml")
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("a resend matching nothing: err = %v, want an *Error", err)
	}
}
