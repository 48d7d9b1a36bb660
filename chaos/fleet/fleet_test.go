package fleet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// ok and fail build attempts: client c arriving at ms a, ending 10ms later.
func ok(c, a int) Attempt {
	return Attempt{Client: c, At: ms(a), End: ms(a + 10), Status: 200, Succeeded: true}
}
func fail(c, a int) Attempt { return Attempt{Client: c, At: ms(a), End: ms(a + 10), Status: 529} }

func fp(v float64) *float64 { return &v }
func ip(v int64) *int64     { return &v }

// known marks a as known from its client's trace: first or not.
func known(a Attempt, first bool) Attempt {
	a.Known, a.First = true, first
	return a
}

func TestCompute(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want Figures
	}{
		{
			name: "no retries: amplification 1, synchrony null",
			in:   Input{Clients: 2, Survived: 2, Attempts: []Attempt{ok(1, 0), ok(2, 5)}},
			want: Figures{Clients: 2, Survived: 2, Requests: 2, Attempts: 2, Amplification: 1,
				GoodputPerMin: round4(2 / ms(15).Minutes())},
		},
		{
			// Client 1 gave up on its first request after one retry and
			// began its second: only its trace can tell (Known); the
			// journal alone reads three attempts of one request.
			name: "the client's trace says where a request begins",
			in: Input{Clients: 1, Survived: 0, Attempts: []Attempt{
				known(fail(1, 0), true), known(fail(1, 100), false), known(fail(1, 200), true)}},
			want: Figures{Clients: 1, Requests: 2, Attempts: 3, Amplification: 1.5, Synchrony: fp(0),
				Status529: 3, Retries: 1},
		},
		{
			name: "without the trace the journal reads a give-up as a retry",
			in: Input{Clients: 1, Survived: 0, Attempts: []Attempt{
				fail(1, 0), fail(1, 100), fail(1, 200)}},
			want: Figures{Clients: 1, Requests: 1, Attempts: 3, Amplification: 3, Synchrony: fp(0),
				Status529: 3, Retries: 2},
		},
		{
			name: "lockstep: every retry within 50ms of another client's",
			in: Input{Clients: 3, Survived: 3, Attempts: []Attempt{
				fail(1, 0), fail(2, 1), fail(3, 2),
				fail(1, 1000), fail(2, 1010), fail(3, 1049),
				ok(1, 3000), ok(2, 3001), ok(3, 3002)}},
			want: Figures{Clients: 3, Survived: 3, Requests: 3, Attempts: 9, Amplification: 3, Synchrony: fp(1),
				Status529: 6, GoodputPerMin: round4(3 / ms(3012).Minutes()), Retries: 6, Synchronized: 6, SynchronizedWide: 6},
		},
		{
			name: "spread: 50ms apart counts, 51ms does not; a client's own retries never synchronize with themselves",
			in: Input{Clients: 2, Survived: 2, Attempts: []Attempt{
				fail(1, 0), fail(2, 0),
				fail(1, 100), fail(1, 120), fail(2, 170),
				ok(1, 500), ok(2, 551)}},
			want: Figures{Clients: 2, Survived: 2, Requests: 2, Attempts: 7, Amplification: 3.5, Synchrony: fp(0.4),
				Status529: 5, GoodputPerMin: round4(2 / ms(561).Minutes()), Retries: 5, Synchronized: 2, SynchronizedWide: 2},
		},
		{
			// Noise 10ms: the window is 60ms wide (51ms and 45ms apart
			// count).
			name: "noise widens and narrows the window",
			in: Input{Clients: 2, Survived: 2, Noise: ms(10), Attempts: []Attempt{
				fail(1, 0), fail(2, 0),
				fail(1, 100), fail(2, 151), fail(1, 300), fail(2, 345),
				ok(1, 1000), ok(2, 2000)}},
			want: Figures{Clients: 2, Survived: 2, Requests: 2, Attempts: 8, Amplification: 4, Synchrony: fp(0.3333),
				Status529: 6, GoodputPerMin: round4(2 / ms(2010).Minutes()), Retries: 6, Synchronized: 2, SynchronizedWide: 4},
		},
		{
			name: "two logical requests per client: the attempt after a success begins one",
			in: Input{Clients: 1, Survived: 1, Attempts: []Attempt{
				ok(1, 0), {Client: 1, At: ms(20), End: ms(30), Status: 429}, ok(1, 40)}},
			want: Figures{Clients: 1, Survived: 1, Requests: 2, Attempts: 3, Amplification: 1.5, Synchrony: fp(0),
				Status429: 1, GoodputPerMin: round4(2 / ms(50).Minutes()), Retries: 1},
		},
		{
			name: "wasted tokens: a 200 that did not complete",
			in: Input{Clients: 1, Attempts: []Attempt{
				{Client: 1, At: 0, End: ms(10), Status: 200, OutputTokens: 7}, ok(1, 20)}},
			want: Figures{Clients: 1, Requests: 1, Attempts: 2, Amplification: 2, Synchrony: fp(0),
				GoodputPerMin: round4(1 / ms(30).Minutes()), WastedOutputTokens: 7, Retries: 1},
		},
		{
			name: "outage ends at 1s; both open requests succeed by 1.5s",
			in: Input{Clients: 2, Survived: 2, HasOutage: true, OutageEnd: time.Second, Attempts: []Attempt{
				fail(1, 0), fail(2, 0), ok(1, 1200), ok(2, 1490)}},
			want: Figures{Clients: 2, Survived: 2, Requests: 2, Attempts: 4, Amplification: 2, Synchrony: fp(0),
				Status529: 2, GoodputPerMin: round4(2 / ms(1500).Minutes()), RecoveryMs: ip(500), Retries: 2},
		},
		{
			name: "metastable: never recovers",
			in: Input{Clients: 1, HasOutage: true, OutageEnd: time.Second, Attempts: []Attempt{
				fail(1, 0), fail(1, 1500)}},
			want: Figures{Clients: 1, Requests: 1, Attempts: 2, Amplification: 2, Synchrony: fp(0),
				Status529: 2, GoodputPerMin: round4(0), Retries: 1},
		},
		{
			name: "empty",
			in:   Input{Clients: 3},
			want: Figures{Clients: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Compute(tt.in)); diff != "" {
				t.Errorf("Compute() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecovery(t *testing.T) {
	tests := []struct {
		name   string
		as     []Attempt
		end    time.Duration
		rpm    int
		want   time.Duration
		wantOK bool
	}{
		{"nothing open at the end: at once", []Attempt{ok(1, 0)}, time.Second, 0, 0, true},
		// 10 open; 90% is 9: the ninth success after the end.
		{"90% of the backlog", backlog(10, 2000, 100), time.Second, 0, ms(1000 + 8*100 + 10), true},
		// With 60 rpm the window is 10s and needs 9 successes in it: the
		// backlog rule (9 of 10) gives the same moment here.
		{"limit window", backlog(10, 2000, 100), time.Second, 60, ms(1000 + 8*100 + 10), true},
		// 100 open, a limit of 6000 rpm (window 100ms): nine successes
		// within 100ms recover the fleet long before 90 of 100 succeed.
		{"limit bounds goodput below the backlog", backlog(100, 2000, 10), time.Second, 6000, ms(1000 + 8*10 + 10), true},
		{"never", []Attempt{fail(1, 0), fail(1, 2000)}, time.Second, 60, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := tt.as
			first := firsts(as)
			got, ok := Recovery(as, first, tt.end, tt.rpm)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Recovery() = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// backlog is n clients failing at 0, then succeeding from ms at, one every
// step ms.
func backlog(n, at, step int) []Attempt {
	var as []Attempt
	for c := 1; c <= n; c++ {
		as = append(as, fail(c, 0))
	}
	for c := 1; c <= n; c++ {
		as = append(as, ok(c, at+(c-1)*step))
	}
	return as
}

func TestTimeline(t *testing.T) {
	as := []Attempt{ok(1, 0), fail(1, 900), {Client: 2, At: ms(1500), Status: 429}, {Client: 2, At: ms(2100), Status: 500}}
	got, step := Timeline(as)
	want := []Bucket{
		{At: 0, Counts: map[string]int{ClassOK: 1, ClassOverloaded: 1}},
		{At: time.Second, Counts: map[string]int{ClassRateLimit: 1}},
		{At: 2 * time.Second, Counts: map[string]int{ClassFailed: 1}},
	}
	if step != time.Second {
		t.Errorf("step = %v, want 1s", step)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Timeline() mismatch (-want +got):\n%s", diff)
	}
	long := []Attempt{ok(1, 0), ok(1, 3_600_000)}
	bs, step := Timeline(long)
	if len(bs) > MaxBuckets || step != 7*time.Second {
		t.Errorf("an hour: %d buckets of %v, want at most %d of 7s", len(bs), step, MaxBuckets)
	}
}
