package verify

import (
	"testing"

	"github.com/retrylab/retrylab/trace"
)

func TestSpeaksForFailures(t *testing.T) {
	t.Parallel()
	ok := trace.ProviderRequestFinished{Success: true}
	retried := trace.ProviderRequestFinished{Success: true, Retries: 2}
	failed := trace.ProviderRequestFinished{Success: false}
	ra := []trace.RetryAttempt{{}}
	tests := []struct {
		retries  []trace.RetryAttempt
		finished []trace.ProviderRequestFinished
		want     bool
	}{
		{nil, nil, false},
		{ra, nil, true},
		{nil, []trace.ProviderRequestFinished{ok, ok}, true},
		{nil, []trace.ProviderRequestFinished{ok, retried}, false},
		{nil, []trace.ProviderRequestFinished{failed}, false},
		{ra, []trace.ProviderRequestFinished{retried}, true},
	}
	for i, tt := range tests {
		if got := speaksForFailures(tt.retries, tt.finished); got != tt.want {
			t.Errorf("case %d: %v, want %v", i, got, tt.want)
		}
	}
}
