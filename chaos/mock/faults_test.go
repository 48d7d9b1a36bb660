package mock

import (
	"slices"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

func TestFaultKinds(t *testing.T) {
	t.Parallel()
	ra := "2"
	tests := []struct {
		f                  scenario.Fault
		describe           string
		closedAll, closedP string // closedBy(true), closedBy(false)
		cuts, completes    bool
		withoutRequest     bool
		toxics             []string
		providerKind       provider.Kind
	}{
		{scenario.Fault{}, "ok", trace.ClosedByServer, trace.ClosedByClient, false, true, false, nil, provider.KindNetwork},
		{scenario.Fault{Kind: fault.Status{Status: 429, RetryAfter: &ra, ErrorType: "rate_limit_error"}}, "429 retry-after=2 rate_limit_error", trace.ClosedByServer, trace.ClosedByClient, false, false, false, nil, provider.KindHTTP},
		{scenario.Fault{Kind: fault.SSEError{AfterEvents: 3}}, "sseError overloaded_error after 3 events", trace.ClosedByServer, trace.ClosedByClient, false, false, false, nil, provider.KindSSEError},
		{scenario.Fault{Kind: fault.Drop{AfterBytes: 100}}, "drop after 100 bytes", trace.ClosedByProxy, trace.ClosedByProxy, true, false, false, nil, provider.KindIncomplete},
		{scenario.Fault{Kind: fault.Hang{}}, "hang", trace.ClosedByClient, trace.ClosedByClient, false, false, false, nil, provider.KindTimeout},
		{scenario.Fault{Kind: fault.Reset{}}, "reset", trace.ClosedByProxy, trace.ClosedByProxy, false, false, false, []string{"a2-reset"}, provider.KindReset},
		{scenario.Fault{Kind: fault.Latency{D: scenario.Duration(time.Second)}}, "latency 1s", trace.ClosedByServer, trace.ClosedByClient, false, true, false, nil, provider.KindNetwork},
		{scenario.Fault{Kind: fault.ContextOverflow{}}, "400 context overflow", trace.ClosedByServer, trace.ClosedByClient, false, false, false, nil, provider.KindHTTP},
		{scenario.Fault{Kind: fault.Toxics{{Type: "latency"}, {Type: "timeout", Name: "t"}}}, "toxics latency+timeout", trace.ClosedByServer, trace.ClosedByProxy, true, false, true, []string{"a2-0-latency", "t"}, provider.KindTimeout},
		{scenario.Fault{Kind: fault.Truncate{AfterEvents: 5}}, "truncate after 5 events", trace.ClosedByServer, trace.ClosedByClient, false, false, false, nil, provider.KindIncomplete},
		{scenario.Fault{Kind: fault.Malformed{AfterEvents: 4}}, "malformed event after 4 events", trace.ClosedByServer, trace.ClosedByClient, false, false, false, nil, provider.KindParse},
		{scenario.Fault{Kind: fault.Stall{AfterEvents: 3}}, "stall after 3 events, keepalive 5s", trace.ClosedByClient, trace.ClosedByClient, false, false, false, nil, provider.KindTimeout},
		{scenario.Fault{Kind: fault.CloseIdle{}}, "closeIdle", trace.ClosedByServer, trace.ClosedByServer, false, false, false, nil, provider.KindEOF},
		{scenario.Fault{Kind: fault.Slow{FirstByte: scenario.Duration(time.Second), PerEvent: scenario.Duration(300 * time.Millisecond)}}, "slow: first byte after 1s, 300ms per event", trace.ClosedByServer, trace.ClosedByClient, false, true, false, nil, provider.KindTimeout},
	}
	for _, tt := range tests {
		k := tt.f.Kind
		if _, ok := fault.Lookup(tt.f.Name()); !ok {
			t.Fatalf("%s: no kind registered", tt.f.Name())
		}
		if got := DescribeFault(tt.f); got != tt.describe {
			t.Errorf("%s: describe %q, want %q", tt.f.Name(), got, tt.describe)
		}
		if got := fault.ClosedBy(k, true); got != tt.closedAll {
			t.Errorf("%s: closedBy(wrote all) %q, want %q", tt.f.Name(), got, tt.closedAll)
		}
		if got := fault.ClosedBy(k, false); got != tt.closedP {
			t.Errorf("%s: closedBy(cut short) %q, want %q", tt.f.Name(), got, tt.closedP)
		}
		if fault.CutsResponse(k) != tt.cuts || fault.Completes(k) != tt.completes || fault.WithoutRequest(k) != tt.withoutRequest {
			t.Errorf("%s: cuts/completes/withoutRequest = %v/%v/%v, want %v/%v/%v", tt.f.Name(),
				fault.CutsResponse(k), fault.Completes(k), fault.WithoutRequest(k), tt.cuts, tt.completes, tt.withoutRequest)
		}
		var names []string
		for _, s := range preConnectToxics(tt.f, 2) {
			names = append(names, s.name)
			if s.toxicity != 1.0 || s.stream != "downstream" {
				t.Errorf("%s: toxic %s toxicity %v stream %q, want 1.0 downstream by default", tt.f.Name(), s.name, s.toxicity, s.stream)
			}
		}
		if !slices.Equal(names, tt.toxics) {
			t.Errorf("%s: pre-connect toxics %v, want %v", tt.f.Name(), names, tt.toxics)
		}
		pe := &provider.Error{}
		fault.Failure(k, pe, fault.Met{})
		if pe.Kind != tt.providerKind {
			t.Errorf("%s: provider error kind %v, want %v", tt.f.Name(), pe.Kind, tt.providerKind)
		}
	}
	for _, name := range fault.Names() {
		if !slices.ContainsFunc(tests, func(tt struct {
			f                  scenario.Fault
			describe           string
			closedAll, closedP string
			cuts, completes    bool
			withoutRequest     bool
			toxics             []string
			providerKind       provider.Kind
		}) bool {
			return tt.f.Name() == name
		}) {
			t.Errorf("kind %s has no row in this table", name)
		}
	}
}

func TestSucceeded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a    ServerAttempt
		want bool
	}{
		{ServerAttempt{Status: 200, Fault: scenario.FaultOK}, true},
		{ServerAttempt{Status: 200, Fault: scenario.FaultLatency}, true},
		{ServerAttempt{Status: 200, Fault: ""}, true}, // a journal without the fault
		{ServerAttempt{Status: 200, Fault: scenario.FaultSSEError}, false},
		{ServerAttempt{Status: 200, Fault: scenario.FaultDrop}, false},
		{ServerAttempt{Status: 200, Fault: scenario.FaultToxics}, false},
		{ServerAttempt{Status: 200, Fault: "truncate"}, false},
		{ServerAttempt{Status: 200, Fault: "malformed"}, false},
		{ServerAttempt{Status: 200, Fault: "no-such-kind"}, false},
		{ServerAttempt{Status: 0, Fault: scenario.FaultOK}, false},
		{ServerAttempt{Status: 529, Fault: scenario.FaultStatus}, false},
	}
	for _, tt := range tests {
		if got := Succeeded(tt.a); got != tt.want {
			t.Errorf("succeeded(%d, %q) = %v, want %v", tt.a.Status, tt.a.Fault, got, tt.want)
		}
	}
}

func TestStatusFaultFailureReadsHeaders(t *testing.T) {
	t.Parallel()
	ra := "3"
	f := scenario.Fault{Kind: fault.Status{Status: 429, RetryAfter: &ra, Headers: map[string]string{"x-should-retry": "false", "retry-after-ms": "1500"}}}
	pe := &provider.Error{}
	fault.Failure(f.Kind, pe, fault.Met{Ended: time.Now()})
	if pe.Status != 429 || pe.ShouldRetry == nil || *pe.ShouldRetry || !pe.HasRetryAfter {
		t.Fatalf("got status %d shouldRetry %v hasRetryAfter %v", pe.Status, pe.ShouldRetry, pe.HasRetryAfter)
	}
	if pe.RetryAfter != 1500*time.Millisecond {
		t.Errorf("retry-after-ms is read first, as the SDKs do: got %v, want 1.5s", pe.RetryAfter)
	}
}
