package probe

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Infer builds the profile of a client from the observations of its probes
// (decision probes and exhaustion samples, in any order). It is a pure
// function: the same observations give the same profile.
func Infer(prov Provider, obs []Observation) *Profile {
	p := &Profile{Schema: Schema, Provider: prov.Name, Confidence: map[string]Confidence{},
		Inconclusive: []Inconclusive{}, Conformance: []Conformance{}, Policy: Policy{Fallbacks: []string{}}}
	var exh, ceil, surv []Observation
	byFault := map[string]Observation{}
	obs = saneAll(obs)
	for _, o := range obs {
		switch {
		case o.Round > 0:
			ceil = append(ceil, o)
		case o.Outage != "":
			surv = append(surv, o)
		case o.Fault == prov.Exhaust.Name:
			exh = append(exh, o)
		default:
			byFault[o.Fault] = o
		}
	}
	slices.SortFunc(exh, func(a, b Observation) int { return cmp.Compare(a.Sample, b.Sample) })
	p.Samples = len(exh)
	for _, f := range prov.Faults {
		if o, ok := byFault[f.Name]; ok {
			p.Faults = append(p.Faults, decision(f, o))
		}
	}
	for _, o := range exh {
		fr := decision(prov.Exhaust, o)
		fr.Sample = o.Sample
		p.Faults = append(p.Faults, fr)
	}
	p.inferMaxRetries(exh)
	fit := p.inferBackoff(exh)
	p.inferRetryAfter(prov, byFault, fit)
	slices.SortStableFunc(ceil, func(a, b Observation) int { return cmp.Compare(a.RetryAfterMs, b.RetryAfterMs) })
	for _, o := range ceil {
		p.Faults = append(p.Faults, decision(CeilingFault(prov, o.RetryAfterMs), o))
	}
	p.inferCeiling(prov, ceil, fit)
	p.inferTimeout(byFault)
	p.inferFallbacks(obs)
	p.inferSurvival(prov, surv, exh, byFault)
	p.noteUnreached(obs)
	p.dropNonFinite()
	p.checkConsistency(prov)
	if p.Unreached != "" || p.Nondeterministic != "" {
		// Their confidences are now inconclusive, with the reason.
		p.nullSurvival(prov)
	}
	p.LearntNothing = learntNothing(p)
	return p
}

// inferFallbacks lists the model switches seen between the attempts of a
// probed request (the journal's model of each attempt).
func (p *Profile) inferFallbacks(obs []Observation) {
	const fig = "policy.fallbacks"
	seen, n := map[string]bool{}, 0
	for _, o := range obs {
		n += len(o.Models)
		for i := 1; i < len(o.Models); i++ {
			if a, b := o.Models[i-1], o.Models[i]; a != b && a != "" && b != "" {
				sw := fmt.Sprintf("%s → %s (after %s, attempt %d)", a, b, o.Fault, i)
				if !seen[a+"→"+b] {
					seen[a+"→"+b] = true
					p.Policy.Fallbacks = append(p.Policy.Fallbacks, sw)
				}
			}
		}
	}
	switch {
	case n == 0:
		p.add(fig, "", "the journal recorded no model for any attempt")
	case len(p.Policy.Fallbacks) == 0:
		p.add(fig, High, fmt.Sprintf("no model switch in %d attempts", n))
	default:
		p.add(fig, High, fmt.Sprintf("%d switch(es) in %d attempts", len(p.Policy.Fallbacks), n))
	}
}

// decision reads what the client did with one fault.
func decision(f Fault, o Observation) FaultResult {
	fr := FaultResult{Fault: f.Name, Group: f.Group, Attempts: o.Attempts, End: o.End, Note: o.Note, WaitsMs: []int64{}}
	if f.HTTPDate {
		fr.DateLeadMs = int64(math.Round(o.DateLeadMs))
	}
	for i, w := range o.WaitsMs {
		fr.WaitsMs = append(fr.WaitsMs, int64(math.Round(w)))
		fr.NoiseMs = append(fr.NoiseMs, int64(math.Round(o.waitNoise()[i])))
	}
	switch {
	case o.End == EndNotRun:
	case o.Attempts <= 0 && (o.End == EndSucceeded || o.End == EndGaveUp):
		// Not a success nor a give-up: no request came (not run). Killed
		// at the deadline, it stays so: that is what happened.
		fr.End = EndNoRequest
		fr.Note = join(fr.Note, o.unreached())
	case o.Attempts >= 2:
		fr.Retried = ptr(true)
	case o.Attempts == 1 && o.End == EndStopped:
		fr.Note = join(fr.Note, fmt.Sprintf("still waiting after the first attempt when stopped at %s", FormatMs(float64(o.DeadlineMs))))
	case o.Attempts == 1:
		fr.Retried = ptr(false)
		if o.End == EndSucceeded {
			fr.Note = join(fr.Note, "the client reported success although its only attempt failed")
		}
	default:
		fr.Note = join(fr.Note, o.unreached())
	}
	return fr
}

// inferMaxRetries reads the retry limit from the exhaustion runs: a client
// that gave up after n+1 attempts retries n times.
func (p *Profile) inferMaxRetries(exh []Observation) {
	const fig = "policy.maxRetries"
	var limits []int
	atLeast := 0
	for _, o := range exh {
		switch {
		case o.Attempts == 0:
			// The client never reached the mock: it says nothing of retries.
		case o.End == EndGaveUp:
			limits = append(limits, o.Attempts-1)
		case o.End == EndSucceeded || o.End == EndStopped:
			atLeast = max(atLeast, o.Attempts-1)
		}
	}
	if len(limits) == 0 {
		reason := "no exhaustion run reached the mock and finished"
		if why := unreachedAll(exh); why != "" {
			reason = why
		}
		if atLeast > 0 {
			reason = fmt.Sprintf("at least %d: the client was still retrying when the probe ran out of failures or of --budget", atLeast)
		}
		p.add(fig, "", reason)
		return
	}
	mode, n := modeOf(limits)
	p.Policy.MaxRetries = ptr(mode)
	level := High
	basis := fmt.Sprintf("%d of %d exhaustion run(s) gave up after %d retries", n, len(exh), mode)
	switch {
	case n < len(limits):
		level = Low
		basis += fmt.Sprintf(" (others: %v: the limit may depend on time, not count)", limits)
	case n == 1:
		level = Medium
	}
	p.Confidence[fig] = Confidence{Level: level, Basis: basis}
}

// inferBackoff fits the exhaustion waits.
func (p *Profile) inferBackoff(exh []Observation) Fit {
	var waits [][]float64
	var noise [][]float64
	for _, o := range exh {
		if o.End == EndNotRun {
			continue
		}
		waits = append(waits, o.WaitsMs)
		noise = append(noise, o.waitNoise())
	}
	fit := FitBackoff(waits, noise)
	p.Policy.Backoff = fit.Backoff
	p.Policy.NestedLoops = fit.Nested
	for k, c := range fit.Confidence {
		p.Confidence[k] = c
	}
	p.Inconclusive = append(p.Inconclusive, fit.Inconclusive...)
	if nl := &p.Policy.NestedLoops; nl.Seen {
		basis := fmt.Sprintf("a wait fell to less than half the one before it after %d attempts: bursts of bursts", nl.Inner)
		if m := p.Policy.MaxRetries; m != nil && nl.Inner > 1 && (*m+1)%nl.Inner == 0 {
			nl.Outer = (*m+1)/nl.Inner - 1
			basis += fmt.Sprintf("; it gave up after %d attempts, %d bursts: the inner loop retries %d times, the outer one %d", *m+1, nl.Outer+1, nl.Inner-1, nl.Outer)
		}
		p.Confidence["policy.nestedLoops"] = Confidence{Level: Medium, Basis: basis}
	}
	return fit
}

// inferRetryAfter reads whether each form of Retry-After was honoured: the
// wait after the fault is the value (within 15% and the noise) and the
// backoff's first wait could not have been it.
func (p *Profile) inferRetryAfter(prov Provider, byFault map[string]Observation, fit Fit) {
	ra := &p.Policy.RetryAfter
	for _, f := range prov.Faults {
		o, ok := byFault[f.Name]
		if !ok || f.Group != "retry-after" {
			continue
		}
		var dst **bool
		fig := ""
		switch {
		case f.HTTPDate:
			dst, fig = &ra.HTTPDate, "policy.retryAfter.httpDate"
		case f.Long:
			p.inferLarge(f, o, fit)
			continue
		case strings.Contains(f.Name, "retry-after-ms"):
			dst, fig = &ra.Ms, "policy.retryAfter.ms"
		default:
			dst, fig = &ra.Seconds, "policy.retryAfter.seconds"
		}
		want := float64(f.RetryAfterMs)
		if f.HTTPDate {
			want = o.DateLeadMs
		}
		v, level, why := honoured(o, want, fit)
		*dst = v
		p.add(fig, level, why)
	}
}

// honoured decides whether a wait honoured a Retry-After of want ms.
func honoured(o Observation, want float64, fit Fit) (*bool, string, string) {
	switch {
	case o.End == EndNotRun:
		return nil, "", "not run: " + o.Note
	case o.Attempts == 0:
		return nil, "", o.unreached()
	case o.Attempts < 2 || len(o.WaitsMs) == 0:
		return nil, "", fmt.Sprintf("the client did not retry the 429 (%s), so how it reads the header does not show", o.End)
	case want <= 0:
		return nil, "", fmt.Sprintf("the date was already %s in the past when the response was sent", FormatMs(-want))
	case o.firstNoise() > noiseShare*want:
		return nil, "", fmt.Sprintf("the noise measured (%s) is more than a quarter of the Retry-After (%s)", FormatMs(o.firstNoise()), FormatMs(want))
	}
	w, noise := o.WaitsMs[0], o.firstNoise()
	tol := 0.15*want + noise
	// A client may pad the value with jitter of its own (Claude Code adds
	// up to 25%): a wait from the value to 30% above it, as
	// conformance's presetHonours allows, is the value honoured.
	above := 0.3*want + noise
	// Could the wait seen have been the backoff's first wait? (Whether the
	// value itself is near the backoff does not matter: a wait of 1.71s
	// for 1.7s is not a backoff whose waits were 2.0–2.05s.)
	inBackoff := fit.FirstHi > 0 && w >= fit.FirstLo-noise && w <= fit.FirstHi+noise
	switch {
	case math.Abs(w-want) <= tol && inBackoff:
		return nil, "", fmt.Sprintf("waited %s for %s, but the backoff's first wait (%s–%s) could be that too", FormatMs(w), FormatMs(want), FormatMs(fit.FirstLo), FormatMs(fit.FirstHi))
	case math.Abs(w-want) <= tol:
		return ptr(true), High, fmt.Sprintf("waited %s for a Retry-After of %s", FormatMs(w), FormatMs(want))
	case w > want && w-want <= above && !inBackoff:
		return ptr(true), High, fmt.Sprintf("waited %s for a Retry-After of %s: the value and up to 30%% of padding", FormatMs(w), FormatMs(want))
	case inBackoff && want < fit.FirstLo:
		return nil, "", fmt.Sprintf("waited %s, its backoff, for a Retry-After of %s: shorter than every backoff wait (%s–%s), so a client that waits the larger of the two looks the same as one that ignores it", FormatMs(w), FormatMs(want), FormatMs(fit.FirstLo), FormatMs(fit.FirstHi))
	case inBackoff:
		return ptr(false), High, fmt.Sprintf("waited %s, its backoff, for a Retry-After of %s", FormatMs(w), FormatMs(want))
	}
	return ptr(false), Medium, fmt.Sprintf("waited %s for a Retry-After of %s (neither the value nor the backoff's first wait)", FormatMs(w), FormatMs(want))
}

// inferLarge reads what the client did with a Retry-After far above any
// sensible wait.
func (p *Profile) inferLarge(f Fault, o Observation, fit Fit) {
	ra := &p.Policy.RetryAfter
	ra.LargeMs = f.RetryAfterMs
	const fig = "policy.retryAfter.large"
	switch {
	case o.End == EndNotRun:
		p.add(fig, "", "not run: "+o.Note)
	case o.Attempts == 0:
		p.add(fig, "", o.unreached())
	case o.Attempts == 1 && o.End == EndStopped:
		ra.Large = "waited"
		p.add(fig, High, fmt.Sprintf("still waiting when stopped at %s for a Retry-After of %s", FormatMs(float64(o.DeadlineMs)), FormatMs(float64(f.RetryAfterMs))))
	case o.Attempts == 1:
		ra.Large = "gave up"
		p.add(fig, High, fmt.Sprintf("gave up at once on a Retry-After of %s", FormatMs(float64(f.RetryAfterMs))))
	case len(o.WaitsMs) == 0:
		p.add(fig, "", fmt.Sprintf("%d attempts but no wait between them in the journal", o.Attempts))
	case capped(o.WaitsMs[0], o.waitNoise()[0], f.RetryAfterMs, fit):
		w := o.WaitsMs[0]
		ra.Large, ra.CapMs = "capped", ptr(int64(math.Round(w)))
		p.add(fig, High, fmt.Sprintf("retried after %s for a Retry-After of %s: far above the backoff's first wait (at most %s) and far below the value, so the value was capped",
			FormatMs(w), FormatMs(float64(f.RetryAfterMs)), FormatMs(fit.FirstHi)))
	default:
		ra.Large = "backoff"
		p.add(fig, High, fmt.Sprintf("retried after %s, ignoring a Retry-After of %s", FormatMs(o.WaitsMs[0]), FormatMs(float64(f.RetryAfterMs))))
	}
}

// capped tells a Retry-After cut down to a cap (openai-java waits 8s for
// any larger value) from one ignored for the backoff: the wait, less its
// noise, is more than twice the longest first wait the backoff showed,
// and, with its noise, still well below the value. A client whose first
// wait is unknown is read as before (backoff).
func capped(w, noise float64, valueMs int64, fit Fit) bool {
	return fit.FirstHi > 0 && w-noise > 2*fit.FirstHi && w+noise < 0.5*float64(valueMs)
}

// ceilingReason says why the battery does not bracket the ceiling (and
// so it is not bisected).
func ceilingReason(ra *RetryAfter) string {
	switch {
	case ra.Large == "waited":
		return fmt.Sprintf("no ceiling below the probe's deadline: the client was still waiting for a Retry-After of %s", FormatMs(float64(ra.LargeMs)))
	case ra.Large == "":
		return "the large Retry-After probe did not run"
	case ra.Large == "capped" && ra.CapMs != nil:
		return fmt.Sprintf("no ceiling to bisect: the client cut a Retry-After of %s down to %s (a cap, not a ceiling)", FormatMs(float64(ra.LargeMs)), FormatMs(float64(*ra.CapMs)))
	}
	return "no small Retry-After in seconds was seen honoured, so there is nothing to bisect from"
}

// inferTimeout reads when the client gave up on a hung attempt.
func (p *Profile) inferTimeout(byFault map[string]Observation) {
	const fig = "policy.timeoutMs"
	o, ok := byFault["hang"]
	switch {
	case !ok || o.End == EndNotRun:
		p.add(fig, "", "the hang probe did not run")
	case o.Attempts == 0:
		p.add(fig, "", o.unreached())
	case o.Attempts == 1 && o.End == EndStopped:
		p.add(fig, "", fmt.Sprintf("more than %s: still waiting on a hung attempt when stopped (raise --budget to see more)", FormatMs(float64(o.DeadlineMs))))
	case o.FirstAttemptMs > 0:
		p.Policy.TimeoutMs = ptr(o.FirstAttemptMs)
		p.add(fig, High, fmt.Sprintf("gave up on a hung attempt after %s (wall clock)", FormatMs(float64(o.FirstAttemptMs))))
	default:
		p.add(fig, "", "the journal has no duration for the hung attempt")
	}
}

// add records a figure's confidence (level set) or why it is inconclusive.
func (p *Profile) add(fig, level, basis string) {
	if level == "" {
		p.Inconclusive = append(p.Inconclusive, Inconclusive{Figure: fig, Reason: basis})
		return
	}
	p.Confidence[fig] = Confidence{Level: level, Basis: basis}
}

func modeOf(xs []int) (mode, n int) {
	counts := map[int]int{}
	for _, x := range xs {
		counts[x]++
	}
	for _, x := range xs {
		if counts[x] > n || (counts[x] == n && x < mode) {
			mode, n = x, counts[x]
		}
	}
	return mode, n
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// FormatMs renders milliseconds as a profile says them: "850ms", "3.2s".
func FormatMs(v float64) string {
	if math.Abs(v) < 1000 {
		return fmt.Sprintf("%.0fms", v)
	}
	if math.Abs(v) >= 100_000 {
		return fmt.Sprintf("%.0fs", v/1000)
	}
	return fmt.Sprintf("%.3gs", v/1000)
}

// MoreSamples decides whether the exhaustion should run again, once the
// battery is done (battery.Runner does): why, or "": the noise
// left the backoff unreadable, or the multiplier is not sure and the runs
// are short (a client with few, short retries, like the SDKs': 2 waits per
// run give few draws of the jitter).
func MoreSamples(p *Profile, obs []Observation) string {
	for _, in := range p.Inconclusive {
		if in.Figure == figInitial && strings.Contains(in.Reason, "noise") {
			return "the backoff's waits were too noisy to read"
		}
	}
	c, ok := p.Confidence[figMultiplier]
	if !ok || c.Level == High || p.Policy.Backoff.Multiplier == nil {
		return ""
	}
	for _, o := range obs {
		total := 0.0
		for _, w := range o.WaitsMs {
			total += w
		}
		if o.Sample > 0 && o.Outage == "" && total*p.TimeScale > float64(shortExhaustion.Milliseconds()) {
			return ""
		}
	}
	return "the multiplier is not sure yet (" + c.Level + ")"
}

// shortExhaustion is the wall time of waits under which an exhaustion run
// is cheap enough to repeat for a surer multiplier.
const shortExhaustion = 10 * time.Second
