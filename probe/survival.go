package probe

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// How long a steady outage the client survives (policy.survivesOutageMs).
//
// An outage of one kind (a steady 529 storm, 429s without Retry-After,
// streams dropped mid-way) of length T is survived when an attempt of the
// client arrives at T or later, policy time from its first attempt's
// arrival: that attempt meets the provider back. A client that gives up
// after attempts arriving at a₀ = 0 < a₁ < … < aₙ (its exhaustion, the
// fault served until it stops) survives every outage up to aₙ and none
// longer: the figure of one run is aₙ, the arrival of its last attempt.
// The figure is the mean over the runs of the kind; low and high are the
// smallest and largest run less and plus the noise measured around that
// run's waits (each wait's noise adds to the arrival of the attempts
// after it; independent, they combine as the root of the sum of their
// squares). A run that outlasted the failures it was served (it reached
// the ok after them) or was still retrying at the deadline shows a lower
// bound only (atLeast). A client that does not retry the kind at all
// survives 0 ms. Each figure is then checked by two outages run as
// scenarios (an outage: block, one phase, one fault): one of
// SurvivalShorter × low must be survived, one of SurvivalLonger × high
// must not; when either check disagrees, the figure is unconfirmed and
// its confidence low.
const (
	// SurvivalShorter and SurvivalLonger are the checks' outages, as a
	// part of the figure's low and high bounds.
	SurvivalShorter = 0.85
	SurvivalLonger  = 1.15
	// SurvivalSamples is how many exhaustion runs of its own each kind
	// gets (in parallel with the battery) when the battery holds none.
	SurvivalSamples = 2
	// survivalSpread is the widest (high − low) / ms of a figure of high
	// confidence: wider, the samples disagree (jitter, noise) too much to
	// be sure of it.
	survivalSpread = 0.3
	// survivalJitterBand is the widest jitter band (the backoff's
	// maxFactor ÷ minFactor) for which a survival figure may be of high
	// confidence: wider (full jitter, ×0–1), each run's figure is a draw
	// spread over most of its range.
	survivalJitterBand = 1.5
	// survivalSlack is the part of a check's deadline beyond the outage
	// and the client's whole schedule: its start, the answer.
	survivalSlack = 10 * time.Second
)

// Survival is how long a steady outage of one kind the client rides out
// (Policy.SurvivesOutageMs), policy time from its first attempt's arrival.
type Survival struct {
	// Ms is the figure: the mean over the runs (a lower bound when AtLeast).
	Ms int64 `json:"ms"`
	// Low and High bound it from the runs' spread and measured noise; High
	// is null when the figure is a lower bound only.
	Low  int64  `json:"low"`
	High *int64 `json:"high"`
	// AtLeast: the client was still retrying when the probe ran out of
	// failures or of --budget, so Ms is the longest outage seen survived.
	AtLeast    bool   `json:"atLeast,omitempty"`
	Confidence string `json:"confidence"`
	// SamplesMs are the runs' figures (the last attempt's arrival).
	SamplesMs []int64 `json:"samplesMs"`
	// Check is what the two outages run against the figure showed (absent
	// when none was run: a profile inferred offline, a stopped probe).
	Check *SurvivalCheck `json:"check,omitempty"`
	// Unconfirmed says why, when a check disagreed with the figure.
	Unconfirmed string `json:"unconfirmed,omitempty"`
}

// SurvivalCheck is what the outages run against a figure showed. A side
// not run has its Ms 0 and its survived null, and Note says why.
type SurvivalCheck struct {
	ShorterMs       int64  `json:"shorterMs"`
	ShorterSurvived *bool  `json:"shorterSurvived"`
	LongerMs        int64  `json:"longerMs"`
	LongerSurvived  *bool  `json:"longerSurvived"`
	Note            string `json:"note,omitempty"`
}

// OutageKind is one steady outage whose survival the probe measures: its
// key in survivesOutageMs and the fault every attempt meets.
type OutageKind struct {
	Key   string
	Fault Fault
	// FromExhaustion: the battery's exhaustion runs serve this fault, so
	// the kind needs no runs of its own.
	FromExhaustion bool
}

// OutageKinds are the kinds a provider's probe measures: its overload
// (529 for Anthropic; the other formats have no 529, and their overload
// is a 503, which the exhaustion runs already serve), a 429 without
// Retry-After, and the stream dropped mid-way.
func OutageKinds(prov Provider) []OutageKind {
	var ks []OutageKind
	if f, ok := prov.Fault("529"); ok {
		ks = append(ks, OutageKind{Key: "529", Fault: f})
	} else if prov.Exhaust.Name != "" {
		ks = append(ks, OutageKind{Key: "503", Fault: prov.Exhaust, FromExhaustion: true})
	}
	for _, name := range []string{"429", "drop"} {
		if f, ok := prov.Fault(name); ok {
			ks = append(ks, OutageKind{Key: name, Fault: f})
		}
	}
	return ks
}

// Checks of a survival figure.
const (
	CheckShorter = "shorter"
	CheckLonger  = "longer"
)

// SurvivalCheckPlan is one outage to run against a figure: the kind, the
// side (CheckShorter, CheckLonger), the outage's length (policy ms) and
// the run's kill deadline (wall clock).
type SurvivalCheckPlan struct {
	Kind     OutageKind
	Side     string
	OutageMs int64
	Deadline time.Duration
}

// SurvivalChecks decides the outages that check the profile's survival
// figures: for each figure above 0, one just shorter than its low bound
// (and, when it has a high one, one just longer), each with a deadline
// long enough for the client's whole schedule after the outage, at most
// budget. A check that does not fit in budget is not planned; the second
// result says, for each kind, why a side is not run.
func SurvivalChecks(p *Profile, prov Provider, budget time.Duration, scale float64) ([]SurvivalCheckPlan, map[string]string) {
	if scale <= 0 {
		scale = 1
	}
	var out []SurvivalCheckPlan
	why := map[string]string{}
	for _, k := range OutageKinds(prov) {
		s := p.Policy.SurvivesOutageMs[k.Key]
		if s == nil {
			continue
		}
		if s.Ms == 0 && !s.AtLeast {
			why[k.Key] = "not checked: the client does not retry it, so any outage ends it"
			continue
		}
		top := float64(s.Ms)
		if s.High != nil {
			top = SurvivalLonger * float64(*s.High)
		}
		dl := func(outage float64) time.Duration {
			// The outage, then at most the client's whole schedule again
			// (its next attempt after the outage comes before it would
			// have given up), then the answer.
			return time.Duration((outage+top)*scale)*time.Millisecond + survivalSlack
		}
		short := int64(math.Floor(SurvivalShorter * float64(s.Low)))
		var notes []string
		switch d := dl(float64(short)); {
		case short <= 0:
			notes = append(notes, "shorter not run: the low bound is 0")
		case d > budget:
			notes = append(notes, fmt.Sprintf("shorter not run: it needs %s, more than --budget %s", d.Round(time.Second), budget))
		default:
			out = append(out, SurvivalCheckPlan{Kind: k, Side: CheckShorter, OutageMs: short, Deadline: d.Round(time.Second)})
		}
		switch {
		case s.High == nil:
			notes = append(notes, "longer not run: the figure is a lower bound only")
		default:
			long := int64(math.Ceil(SurvivalLonger * float64(*s.High)))
			if d := dl(float64(long)); d > budget {
				notes = append(notes, fmt.Sprintf("longer not run: it needs %s, more than --budget %s", d.Round(time.Second), budget))
			} else {
				out = append(out, SurvivalCheckPlan{Kind: k, Side: CheckLonger, OutageMs: long, Deadline: d.Round(time.Second)})
			}
		}
		if len(notes) > 0 {
			why[k.Key] = strings.Join(notes, "; ")
		}
	}
	return out, why
}

// NoteSurvivalChecks adds to the profile's figures why a check side was
// not run (SurvivalChecks' second result).
func (p *Profile) NoteSurvivalChecks(why map[string]string) {
	for key, w := range why {
		s := p.Policy.SurvivesOutageMs[key]
		if s == nil || w == "" {
			continue
		}
		if s.Check == nil {
			s.Check = &SurvivalCheck{}
		}
		s.Check.Note = join(s.Check.Note, w)
		if c, ok := p.Confidence[survivalFig(key)]; ok {
			c.Basis = join(c.Basis, w)
			p.Confidence[survivalFig(key)] = c
		}
	}
}

func survivalFig(key string) string { return "policy.survivesOutageMs." + key }

// survivalRun is what one run of a kind says of its survival.
type survivalRun struct {
	ms float64 // the last attempt's arrival (a lower bound when atLeast)
	// noise is the noise measured around the waits before it, combined
	// as independent errors (the root of the sum of their squares).
	noise   float64
	atLeast bool
	none    bool // gave up after its first attempt: no retry
}

// readSurvivalRun reads one exhaustion-like run of a kind (the fault
// served until it stops, or Served times); ok false and why when it says
// nothing.
func readSurvivalRun(o Observation) (survivalRun, bool, string) {
	arr := arrivals(o)
	switch {
	case o.End == EndNotRun:
		return survivalRun{}, false, "not run: " + o.Note
	case o.Attempts <= 0:
		return survivalRun{}, false, "no attempt reached the mock"
	case o.Attempts == 1 && o.End == EndGaveUp:
		return survivalRun{none: true}, true, ""
	case o.Attempts == 1 && o.End == EndStopped:
		return survivalRun{}, false, fmt.Sprintf("still waiting after its first attempt when stopped at %s", FormatMs(float64(o.DeadlineMs)))
	case o.Attempts == 1 && o.End == EndSucceeded:
		return survivalRun{}, false, "the client reported success although its only attempt failed"
	case len(arr) < o.Attempts:
		return survivalRun{}, false, fmt.Sprintf("the journal holds %d arrival(s) for %d attempts", len(arr), o.Attempts)
	}
	last := arr[o.Attempts-1]
	noise := 0.0
	for _, n := range o.waitNoise() {
		noise += n * n
	}
	noise = math.Sqrt(noise)
	r := survivalRun{ms: last, noise: noise}
	switch {
	case o.End == EndSucceeded && o.Attempts > o.Served:
		// It met the ok after the failures: it survived an outage as long
		// as the arrival of that attempt, and may survive longer ones.
		r.atLeast = true
	case o.End == EndSucceeded:
		return survivalRun{}, false, fmt.Sprintf("succeeded after %d attempts while %d failures were served", o.Attempts, o.Served)
	case o.End == EndStopped:
		r.atLeast = true
	}
	return r, true, ""
}

// arrivals are the run's attempts' arrivals since the first (policy
// time), made safe: finite, within [0, maxWaitMs], never going back.
func arrivals(o Observation) []float64 {
	out := make([]float64, len(o.ArrivalsMs))
	prev := 0.0
	for i, a := range o.ArrivalsMs {
		a = max(prev, clampMs(a))
		if i == 0 {
			a = 0
		}
		out[i], prev = a, a
	}
	return out
}

// inferSurvival reads policy.survivesOutageMs: for each kind, its own runs
// (Observation.Outage), the exhaustion runs when they serve the kind, or
// the kind's decision probe when it was served Repeat times (--per-fault);
// then the checks run against the figure.
func (p *Profile) inferSurvival(prov Provider, surv, exh []Observation, byFault map[string]Observation) {
	kinds := OutageKinds(prov)
	if len(kinds) == 0 {
		return
	}
	p.Policy.SurvivesOutageMs = map[string]*Survival{}
	for _, k := range kinds {
		fig := survivalFig(k.Key)
		var runs, checks []Observation
		for _, o := range surv {
			switch {
			case o.Outage != k.Key:
			case o.Check != "":
				checks = append(checks, o)
			default:
				runs = append(runs, o)
			}
		}
		if k.FromExhaustion {
			runs = append(runs, exh...)
		}
		if o, ok := byFault[k.Fault.Name]; ok && o.Served > 1 {
			runs = append(runs, o)
		}
		slices.SortStableFunc(runs, func(a, b Observation) int { return a.Sample - b.Sample })
		s, level, basis := survivalOf(k, runs)
		if s == nil && len(runs) == 0 {
			if o, ok := byFault[k.Fault.Name]; ok && o.Attempts == 1 && o.End == EndGaveUp {
				// Not exhausted, but its decision probe shows it does not
				// retry the kind at all.
				s, level = &Survival{High: ptr(int64(0)), SamplesMs: []int64{0}}, High
				basis = fmt.Sprintf("it does not retry a %s failure: it gave up after its first attempt (decision probe); any outage ends it", kindName(k))
			}
		}
		if s == nil {
			p.Policy.SurvivesOutageMs[k.Key] = nil
			p.add(fig, "", basis)
			continue
		}
		if j := p.Policy.Backoff.Jitter; level == High && !s.AtLeast && s.Ms > 0 && j != nil && j.MaxFactor > survivalJitterBand*max(j.MinFactor, 0.01) {
			// Each run's outage is a draw of the jitter: runs that agree
			// may agree by chance (plandex's full jitter: two runs 0.9s
			// apart, its mean 5s off).
			level = Low
			basis += fmt.Sprintf("; the backoff's jitter (×%.2f–%.2f) makes each run's figure a draw: %d run(s) do not pin its mean", j.MinFactor, j.MaxFactor, len(s.SamplesMs))
		}
		s.Confidence = level
		if len(checks) > 0 {
			basis = join(basis, s.applyChecks(checks))
			if s.Unconfirmed != "" {
				s.Confidence = Low
			}
		}
		p.Policy.SurvivesOutageMs[k.Key] = s
		p.add(fig, s.Confidence, basis)
	}
}

// nullSurvival makes every survival figure null (a profile that measured
// nothing, or of a client not deterministic enough to profile: the
// figures' Inconclusive entries say why).
func (p *Profile) nullSurvival(prov Provider) {
	p.Policy.SurvivesOutageMs = map[string]*Survival{}
	for _, k := range OutageKinds(prov) {
		p.Policy.SurvivesOutageMs[k.Key] = nil
	}
}

// kindName names a kind in a sentence: "a steady 529", "a steady 429
// (no Retry-After) outage".
func kindName(k OutageKind) string {
	switch k.Key {
	case "429":
		return "429 (no Retry-After)"
	case "drop":
		return "dropped-stream"
	}
	return k.Key
}

// survivalOf is the figure of a kind from its runs, its confidence and
// basis; nil and the reason when the runs cannot tell it.
func survivalOf(k OutageKind, runs []Observation) (*Survival, string, string) {
	var got []survivalRun
	var why []string
	for _, o := range runs {
		r, ok, w := readSurvivalRun(o)
		if !ok {
			why = append(why, w)
			continue
		}
		got = append(got, r)
	}
	if len(got) == 0 {
		if len(runs) == 0 {
			return nil, "", fmt.Sprintf("no run served a steady %s outage (not run, or left out by --only)", kindName(k))
		}
		return nil, "", fmt.Sprintf("none of the %d run(s) of a steady %s outage could be read: %s", len(runs), kindName(k), strings.Join(why, "; "))
	}
	var exact, bounds []survivalRun
	nones := 0
	for _, r := range got {
		switch {
		case r.none:
			nones++
			exact = append(exact, r)
		case r.atLeast:
			bounds = append(bounds, r)
		default:
			exact = append(exact, r)
		}
	}
	s := &Survival{SamplesMs: []int64{}}
	for _, r := range got {
		s.SamplesMs = append(s.SamplesMs, int64(math.Round(r.ms)))
	}
	n := len(got)
	if nones == n {
		s.High = ptr(int64(0))
		return s, High, fmt.Sprintf("it does not retry a %s failure: it gave up after its first attempt in %d of %d run(s); any outage ends it", kindName(k), n, n)
	}
	if nones > 0 {
		return nil, "", fmt.Sprintf("the runs of a steady %s outage disagree: %d of %d gave up at once, the others retried", kindName(k), nones, n)
	}
	maxExact := -1.0
	for _, r := range exact {
		maxExact = max(maxExact, r.ms)
	}
	var maxBound survivalRun
	for _, r := range bounds {
		if r.ms > maxBound.ms {
			maxBound = r
		}
	}
	if len(bounds) > 0 && (len(exact) == 0 || maxBound.ms > maxExact) {
		s.Ms, s.Low, s.AtLeast = int64(math.Round(maxBound.ms)), int64(math.Round(max(0, maxBound.ms-maxBound.noise))), true
		return s, Low, fmt.Sprintf("at least %s, a lower bound only: the client was still retrying a steady %s outage when the probe ran out of failures or of --budget (%d of %d run(s)); raise --repeat or --budget to see it give up",
			FormatDur(int64(math.Round(maxBound.ms))), kindName(k), len(bounds), n)
	}
	sum, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	var loR, hiR survivalRun
	for _, r := range exact {
		sum += r.ms
		if r.ms < lo {
			lo, loR = r.ms, r
		}
		if r.ms > hi {
			hi, hiR = r.ms, r
		}
	}
	mean := sum / float64(len(exact))
	s.Ms = int64(math.Round(mean))
	s.Low = int64(math.Round(max(0, lo-loR.noise)))
	s.High = ptr(int64(math.Round(hi + hiR.noise)))
	spread := float64(*s.High-s.Low) / max(mean, 1)
	basis := fmt.Sprintf("its last attempt arrived %s after its first (mean of %d run(s) that gave up; runs %s to %s, noise ±%s/±%s)",
		FormatMs(mean), len(exact), FormatMs(lo), FormatMs(hi), FormatMs(loR.noise), FormatMs(hiR.noise))
	if len(bounds) > 0 {
		basis += fmt.Sprintf("; %d run(s) stopped earlier, still retrying", len(bounds))
	}
	level := High
	switch {
	case len(exact) < 2:
		level = Low
		basis += "; one run only: the jitter's spread is not seen"
	case spread > survivalSpread:
		level = Low
		basis += fmt.Sprintf("; the bounds are %.0f%% apart (jitter or noise)", spread*100)
	}
	return s, level, basis
}

// applyChecks records the checks' runs in the figure and says what they
// showed; a check that disagrees makes the figure unconfirmed.
func (s *Survival) applyChecks(checks []Observation) string {
	if s.Check == nil {
		s.Check = &SurvivalCheck{}
	}
	var lines, bad []string
	for _, o := range checks {
		survived, what := checkResult(o)
		switch o.Check {
		case CheckShorter:
			s.Check.ShorterMs, s.Check.ShorterSurvived = o.OutageMs, survived
			if survived != nil && !*survived {
				bad = append(bad, fmt.Sprintf("an outage of %s (%.2f× the low bound) was not survived", FormatMs(float64(o.OutageMs)), SurvivalShorter))
			}
		case CheckLonger:
			s.Check.LongerMs, s.Check.LongerSurvived = o.OutageMs, survived
			if survived != nil && *survived {
				bad = append(bad, fmt.Sprintf("an outage of %s (%.2f× the high bound) was survived", FormatMs(float64(o.OutageMs)), SurvivalLonger))
			}
		default:
			continue
		}
		lines = append(lines, fmt.Sprintf("%s outage of %s: %s", o.Check, FormatMs(float64(o.OutageMs)), what))
		if survived == nil {
			s.Check.Note = join(s.Check.Note, fmt.Sprintf("%s check not told: %s", o.Check, what))
		}
	}
	if len(bad) > 0 {
		s.Unconfirmed = strings.Join(bad, "; ")
	}
	out := "checked: " + strings.Join(lines, "; ")
	if s.Unconfirmed != "" {
		out += "; unconfirmed: " + s.Unconfirmed
	}
	return out
}

// checkResult reads a check's run: survived (the client succeeded after
// the outage), not (it gave up), or unknown and why.
func checkResult(o Observation) (*bool, string) {
	switch {
	case o.End == EndNotRun:
		return nil, "not run: " + o.Note
	case o.Attempts <= 0:
		return nil, "no attempt reached the mock"
	case o.End == EndSucceeded:
		return ptr(true), fmt.Sprintf("survived (%d attempts)", o.Attempts)
	case o.End == EndGaveUp:
		return ptr(false), fmt.Sprintf("gave up (%d attempts)", o.Attempts)
	}
	return nil, fmt.Sprintf("still retrying when stopped at %s (%d attempts)", FormatMs(float64(o.DeadlineMs)), o.Attempts)
}

// SurvivalLine says a survival figure in words: "survives a steady 529
// outage of 2m38s (1m55s to 3m01s), confidence high, checked (…)" — the
// profile's first lines in the table and the Markdown.
func SurvivalLine(key string, s *Survival) string {
	k := OutageKind{Key: key}
	if s == nil {
		return fmt.Sprintf("a steady %s outage: unknown (see inconclusive)", kindName(k))
	}
	if s.Ms == 0 && !s.AtLeast {
		return fmt.Sprintf("survives no steady %s outage: it does not retry it, confidence %s", kindName(k), s.Confidence)
	}
	out := fmt.Sprintf("survives a steady %s outage of %s", kindName(k), FormatDur(s.Ms))
	switch {
	case s.AtLeast:
		out = fmt.Sprintf("survives a steady %s outage of at least %s (a lower bound: still retrying)", kindName(k), FormatDur(s.Ms))
	case s.High != nil:
		out += fmt.Sprintf(" (%s to %s)", FormatDur(s.Low), FormatDur(*s.High))
	}
	out += ", confidence " + s.Confidence
	switch c := s.Check; {
	case s.Unconfirmed != "":
		out += ", UNCONFIRMED: " + s.Unconfirmed
	case c != nil && c.ShorterSurvived != nil && c.LongerSurvived != nil:
		out += fmt.Sprintf(", checked (%s survived, %s not)", FormatDur(c.ShorterMs), FormatDur(c.LongerMs))
	case c != nil && c.ShorterSurvived != nil:
		out += fmt.Sprintf(", checked (%s survived)", FormatDur(c.ShorterMs))
	default:
		out += ", not checked"
	}
	return out
}

// FormatDur says a policy time in ms as a person reads it: 850ms, 4.2s,
// 2m38s, 1h05m.
func FormatDur(ms int64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%dms", ms)
	case ms < 60_000:
		return fmt.Sprintf("%.3gs", float64(ms)/1000)
	case ms < 3_600_000:
		s := (ms + 500) / 1000
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	m := (ms + 30_000) / 60_000
	return fmt.Sprintf("%dh%02dm", m/60, m%60)
}
