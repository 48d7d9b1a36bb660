package verify

import (
	"fmt"
	"strings"
	"time"

	"github.com/retrylab/retrylab/chaos/scenario"
)

// An external client's own process costs are part of each wait the server
// sees and invisible to the harness's probe: starting `sleep` and `curl`
// for every attempt, an interpreter warming up, all slower on a busy
// machine. The server-side tolerance of a client that is not the built-in
// one (an external command, or whatever talks to `chaos serve`) is widened
// by ExternalAllowance plus ExternalRatio of the wait. Measured: a shell
// client with fixed 1s waits showed gaps of 1.009–1.013s alone and up to
// 1.047s with twelve such scenarios at once on two cores.
const (
	ExternalAllowance = 25 * time.Millisecond
	ExternalRatio     = 0.03
)

// defaultTolerance is the tolerance of delay checks when a scenario gives
// none: DESIGN.md's "measured waits match the policy within 5ms + 2%". A
// tolerance is in policy time, like every expectation of a scenario.
var defaultTolerance = scenario.Tolerance{Ratio: 0.02, Abs: scenario.Duration(5 * time.Millisecond)}

// ServerResidual is what the measurement path adds to a wait the server
// sees, on top of the client's own wait: the end of one attempt and the
// arrival of the next are stamped by the mock on the far side of the proxy,
// and the client opens a new connection through it. Measured on an idle
// machine: 0.4–0.8ms on average, 1–3ms at worst.
const ServerResidual = 3 * time.Millisecond

// remoteProxyAllowance widens the server-side tolerance when Toxiproxy is a
// toxiproxy-server in another process (--toxiproxy): every reconnect then
// crosses that process, whose scheduling the probe cannot see. Measured with
// all 32 scenarios of the suite at once on an idle 2-core machine: a retry at
// once showed gaps of 3–15ms through toxiproxy-server, 0–2ms embedded.
const remoteProxyAllowance = 20 * time.Millisecond

func (ob Observed) scale() float64 {
	if ob.TimeScale <= 0 {
		return 1
	}
	return ob.TimeScale
}

// minSeparation is the smallest mistake, on the long side, that a server-side
// delay check promises to catch: a wait more than this (or more than twice
// the allowed wait) above the allowed range always fails the check, unless
// the scenario's own tolerance allows it. Where the noise measured around a
// gap makes that promise impossible, the check is inconclusive instead of
// passed.
const minSeparation = 200 * time.Millisecond

// gapBand is the range of wall-clock gaps accepted for one wait: the
// expected range [lo, hi] widened by the scenario's tolerance (allowed, on
// both sides) and by the noise measured around the gap (below, above).
//
// The two are not alike. allowed is the author's statement of what is
// acceptable (expect.tolerance, or the default): retrylab judges against it
// and does not second-guess it. below and above are what retrylab measured
// or knows of the measurement (timer lateness, run-queue time, a client's
// process costs, the measurement path): only they can make a check
// inconclusive. Measured noise is not symmetric: a client's own lateness
// only lengthens a gap, so it widens above alone; lateness of the harness's
// own process can move either end of a gap, so it widens both.
type gapBand struct {
	wait        Wait
	lo, hi      time.Duration
	ok          bool // the policy retries here
	allowed     scenario.Tolerance
	allowedFrom string // where allowed comes from, for the warning
	// authored: allowed is the scenario's expect.tolerance, not the
	// default. Only an author's tolerance gets a warning for being wide:
	// the default (5ms + 2%) is retrylab's accuracy, and where it, with
	// the measured noise, reaches a wrong wait, the noise is the cause
	// and conclusive already judged it; "narrow your tolerance" would be
	// advice the author cannot take.
	authored      bool
	below, above  scenario.Tolerance
	describeBelow string // what went into each side, for Where
	describeAbove string
}

func (b gapBand) accepts(g time.Duration) bool {
	return b.ok && g >= b.lo-width(b.allowed, b.lo)-width(b.below, b.lo) &&
		g <= b.hi+width(b.allowed, b.hi)+width(b.above, b.hi)
}

// conclusive reports whether the measured noise still tells the expected
// wait from a plausibly wrong one: a client that waited half the shortest
// allowed wait (or not at all), or twice the longest (at least
// minSeparation more). The range of gaps such a client could show under
// the same noise, [w − below, w + above], must not meet the range of gaps
// the expected wait shows under it; so the measured width below + above
// must stay under the distance between them. The scenario's tolerance does
// not count: it is a choice, not noise (see wide).
func (b gapBand) conclusive() bool {
	if !b.ok {
		return true
	}
	if b.lo > 0 && width(b.below, b.lo)+width(b.above, b.lo) >= b.lo/2 {
		return false
	}
	return width(b.below, b.hi)+width(b.above, b.hi) < max(b.hi, minSeparation)
}

// conclusiveAt reports whether the gap g itself rules out the plausibly
// wrong waits of conclusive under the measured noise, when the band as a
// whole cannot: a wait of half the shortest allowed one (or less) shows
// gaps up to lo/2 + above, one of twice the longest (or more) gaps from
// that wait − below; a gap outside both ranges came from neither. So a
// right wait on a busy machine passes when the gap it showed could not
// have come from a wrong one, and stays inconclusive when it could. Like
// conclusive, it counts measured noise only, never the scenario's
// tolerance.
func (b gapBand) conclusiveAt(g time.Duration) bool {
	if !b.ok {
		return true
	}
	if b.lo > 0 && g <= b.lo/2+width(b.above, b.lo) {
		return false
	}
	long := max(2*b.hi, b.hi+minSeparation)
	return g < long-width(b.below, long)
}

// wide reports which plausibly wrong waits (those of conclusive) the band
// accepts under the measured noise because the scenario's tolerance
// reaches them: short, a wait of half the shortest allowed one; long, one
// of twice the longest. A conclusive band that is wide passes its gaps
// with a warning, since the author chose that band.
func (b gapBand) wide() (short, long bool) {
	if !b.ok {
		return false, false
	}
	short = b.lo > 0 && width(b.allowed, b.lo)+width(b.below, b.lo)+width(b.above, b.lo) >= b.lo/2
	long = width(b.allowed, b.hi)+width(b.below, b.hi)+width(b.above, b.hi) >= max(b.hi, minSeparation)
	return short, long
}

func width(t scenario.Tolerance, at time.Duration) time.Duration {
	return t.Abs.D() + time.Duration(t.Ratio*float64(at))
}

func plus(a, b scenario.Tolerance) scenario.Tolerance {
	return scenario.Tolerance{Ratio: a.Ratio + b.Ratio, Abs: a.Abs + b.Abs}
}

// serverBand is the band of one server-side wait expected in [lo, hi] (wall
// clock): the scenario's tolerance (ratio on the wall-clock wait, abs scaled
// like the waits) as allowed, and as measured noise ServerResidual, twice
// the harness's lateness measured around the gap on both sides, a remote
// toxiproxy-server's allowance, and, for external clients, their process
// costs and measured CPU and run-queue time on the long side.
func (ob Observed) serverBand(sc *scenario.Scenario, w Wait, lo, hi time.Duration, ok bool) gapBand {
	allowed, from := allowance(sc.Expect.Tolerance, ob.scale())
	residual := scenario.Tolerance{Abs: scenario.Duration(ServerResidual)}
	if ob.RemoteProxy {
		residual.Abs += scenario.Duration(remoteProxyAllowance)
	}
	b := gapBand{wait: w, lo: lo, hi: hi, ok: ok, allowed: allowed, allowedFrom: from, authored: sc.Expect.Tolerance != (scenario.Tolerance{}),
		below: residual, above: residual}
	notes, aboveNotes := ob.measuredNoise(&b, w)
	b.describeBelow = tolString(plus(b.allowed, b.below))
	if len(notes) > 0 {
		b.describeBelow += " (incl. " + strings.Join(notes, ", ") + ")"
	}
	b.describeAbove = tolString(plus(b.allowed, b.above))
	if len(aboveNotes) > 0 {
		b.describeAbove += " (incl. " + strings.Join(aboveNotes, ", ") + ")"
	}
	return b
}

// measuredNoise widens b.below and b.above by the noise measured around
// wait w and says what went into each side.
func (ob Observed) measuredNoise(b *gapBand, w Wait) (notes, aboveNotes []string) {
	slack := w.Slack
	if slack == 0 {
		slack = ob.Slack
	}
	// Slack is twice the lateness measured around the gap. A late wake-up
	// of the client, of the proxy forwarding its request or of the mock
	// stamping its arrival lengthens the gap; only the mock stamping the end
	// of the previous attempt late shortens it: so the long side gets the
	// slack, the short side half of it.
	switch s := w.Sleep; {
	case s != nil:
		// The built-in client measured its own wait: what lengthened or
		// shortened the gap beyond its timer is known, not estimated.
		b.below.Abs += scenario.Duration(max(0, -s.Lead))
		b.above.Abs += scenario.Duration(max(0, s.Lead) + max(0, s.Late) + max(0, s.Send))
		if s.Lead < 0 {
			notes = append(notes, fmtDur(-s.Lead)+" the client was already waiting when the attempt's end was stamped")
		}
		aboveNotes = append(aboveNotes, fmt.Sprintf("%s timer lateness + %s from waking to the request's arrival + %s from the attempt's end to the wait's start, measured",
			fmtDur(max(0, s.Late)), fmtDur(max(0, s.Send)), fmtDur(max(0, s.Lead))))
	case slack > 0:
		b.below.Abs += scenario.Duration(slack / 2)
		b.above.Abs += scenario.Duration(slack)
		notes = append(notes, fmtDur(slack/2)+" measured scheduling lateness")
		aboveNotes = append(aboveNotes, fmtDur(slack)+" for twice the measured scheduling lateness")
	}
	if ob.RemoteProxy {
		notes = append(notes, fmtDur(remoteProxyAllowance)+" for a toxiproxy-server in another process")
		aboveNotes = append(aboveNotes, notes[len(notes)-1])
	}
	if ob.Client != nil || !ob.ClientTrace {
		b.above.Abs += scenario.Duration(ExternalAllowance)
		b.above.Ratio += ExternalRatio
		aboveNotes = append(aboveNotes, fmt.Sprintf("%s + %g%% for the client's process costs", fmtDur(ExternalAllowance), ExternalRatio*100))
		switch {
		case w.ClientLagMeasured:
			b.above.Abs += scenario.Duration(w.ClientLag)
			aboveNotes = append(aboveNotes, fmtDur(w.ClientLag)+" measured run-queue (and start-up CPU) time of the client's processes")
		default:
			aboveNotes = append(aboveNotes, "the client's run-queue time not measured")
		}
	}
	return notes, aboveNotes
}

// allowance is the scenario's tolerance t (defaultTolerance if empty) on the
// server's wall clock: the ratio as written, abs scaled by timeScale; from
// names it for a warning.
func allowance(t scenario.Tolerance, timeScale float64) (allowed scenario.Tolerance, from string) {
	client, _ := tolerances(t, timeScale)
	from = "expect.tolerance (" + tolString(client) + ")"
	if t.Ratio == 0 && t.Abs == 0 {
		from = "the default tolerance (" + tolString(client) + ")"
	}
	if timeScale <= 0 {
		timeScale = 1
	}
	return scenario.Tolerance{Ratio: client.Ratio, Abs: scenario.Duration(scaleDur(client.Abs.D(), timeScale))}, from
}

// tolerances returns the client and server tolerances for a scenario's
// tolerance block t (defaultTolerance if empty). The client's waits are in
// policy time and held to t as written. The server's gaps are wall clock:
// t.Ratio applies to the wall-clock wait (a ratio does not care about the
// scale), t.Abs is policy time and is scaled by timeScale like the waits
// themselves, and then the measurement path adds ServerResidual (serverBand
// adds what was measured around each gap). There is no other floor: on an
// idle machine a server gap is held to 3ms + 5ms × timeScale + 2%.
func tolerances(t scenario.Tolerance, timeScale float64) (client, server scenario.Tolerance) {
	client = defaultTolerance
	if t.Ratio != 0 || t.Abs != 0 {
		client = t
	}
	if timeScale <= 0 {
		timeScale = 1
	}
	server = scenario.Tolerance{Ratio: client.Ratio, Abs: scenario.Duration(scaleDur(client.Abs.D(), timeScale) + ServerResidual)}
	return client, server
}

func near(got, want time.Duration, t scenario.Tolerance) bool {
	diff := got - want
	if diff < 0 {
		diff = -diff
	}
	return diff <= t.Abs.D()+time.Duration(t.Ratio*float64(want))
}

func inside(got, lo, hi time.Duration, t scenario.Tolerance) bool {
	return got >= lo-t.Abs.D()-time.Duration(t.Ratio*float64(lo)) &&
		got <= hi+t.Abs.D()+time.Duration(t.Ratio*float64(hi))
}

func scaleDur(d time.Duration, s float64) time.Duration { return time.Duration(float64(d) * s) }

func tolString(t scenario.Tolerance) string {
	abs := t.Abs.D()
	if abs < 10*time.Millisecond && abs != abs.Round(time.Millisecond) {
		return fmt.Sprintf("%s + %g%%", abs.Round(100*time.Microsecond), t.Ratio*100)
	}
	return fmt.Sprintf("%s + %g%%", fmtDur(abs), t.Ratio*100)
}
