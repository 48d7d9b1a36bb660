package profile

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/retrylab/retrylab/probe"
)

// Table renders a probe profile for a terminal: the faults, the policy
// with each figure's confidence, what is inconclusive, and one line per
// preset of conformance (holds n of m, and the rules that differ).
func Table(w io.Writer, p *probe.Profile) error {
	v := viewOf(p)
	fmt.Fprintf(w, "Probe of %s (provider %s, %d sample(s), %s)\n", p.Client, p.Provider, p.Samples, v.duration)
	if v.plan != "" {
		fmt.Fprintf(w, "Said before it started: %s\n", v.plan)
	}
	for _, n := range v.notes {
		fmt.Fprintln(w, strings.ToUpper(n.title)+": "+n.text)
	}
	if v.warmUpOff != "" {
		fmt.Fprintln(w, "Warm-up request: off: "+v.warmUpOff)
	}
	if len(v.survival) > 0 {
		fmt.Fprintln(w, "\nSurvives (steady outages, policy time from the first attempt):")
		for _, l := range v.survival {
			fmt.Fprintln(w, "  "+l)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nFAULT\tRETRIED\tATTEMPTS\tWAITS (ms)\tEND")
	for _, f := range v.faults {
		end := f.end
		if f.note != "" {
			end += " (" + f.note + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", f.name, f.retried, f.attempts, f.waits, end)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nPolicy:")
	for _, l := range v.policy {
		fmt.Fprintf(w, "  %-28s %-22s %s\n", l[0], l[1], l[2])
	}
	if len(p.Inconclusive) > 0 {
		fmt.Fprintln(w, "\nInconclusive (not guessed):")
		for _, in := range p.Inconclusive {
			fmt.Fprintf(w, "  %s: %s\n", in.Figure, in.Reason)
		}
	}
	if len(p.Unmodelled) > 0 {
		fmt.Fprintln(w, "\nNot modelled by the learnt policy (left out of delays: policy):")
		for _, u := range p.Unmodelled {
			fmt.Fprintf(w, "  %s: %s; left out: %s\n", u.Fault, u.Seen, u.LeftOut)
		}
	}
	if gs := probe.GroupFindings(p.Findings); len(gs) > 0 {
		fmt.Fprintln(w, "\nFindings (from the experiments' journals; the first one's evidence):")
		for _, g := range gs {
			fmt.Fprintf(w, "  %s (%s): %s\n", g.Code, probesOf(g), g.Evidence)
		}
	}
	fmt.Fprintln(w, "\nConformance:")
	for _, l := range v.conformance {
		fmt.Fprintln(w, "  "+l)
	}
	return nil
}

// Markdown renders the same as Table in Markdown.
func Markdown(w io.Writer, p *probe.Profile) error {
	v := viewOf(p)
	fmt.Fprintf(w, "# Retry policy of `%s`\n\nProvider %s, %d exhaustion sample(s), %s.\n\n", p.Client, p.Provider, p.Samples, v.duration)
	if v.plan != "" {
		fmt.Fprintf(w, "Said before it started: %s.\n\n", v.plan)
	}
	for _, n := range v.notes {
		fmt.Fprintf(w, "> **%s**: %s.\n\n", n.title, mdEscape(n.text))
	}
	if v.warmUpOff != "" {
		fmt.Fprintf(w, "Warm-up request: off: %s.\n\n", mdEscape(v.warmUpOff))
	}
	if len(v.survival) > 0 {
		fmt.Fprint(w, "## Survives\n\nSteady outages, policy time from the first attempt:\n\n")
		for _, l := range v.survival {
			fmt.Fprintf(w, "- %s\n", mdEscape(l))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "| fault | retried | attempts | waits (ms) | end |\n|---|---|---|---|---|")
	for _, f := range v.faults {
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s |\n", f.name, f.retried, f.attempts, f.waits, strings.TrimSpace(f.end+" "+f.note))
	}
	fmt.Fprintln(w, "\n## Policy\n\n| figure | value | confidence |\n|---|---|---|")
	for _, l := range v.policy {
		fmt.Fprintf(w, "| %s | %s | %s |\n", l[0], l[1], l[2])
	}
	if len(p.Inconclusive) > 0 {
		fmt.Fprint(w, "\n## Inconclusive (not guessed)\n\n")
		for _, in := range p.Inconclusive {
			fmt.Fprintf(w, "- `%s`: %s\n", in.Figure, in.Reason)
		}
	}
	if len(p.Unmodelled) > 0 {
		fmt.Fprint(w, "\n## Not modelled by the learnt policy\n\nLeft out of what `delays: policy` holds:\n\n")
		for _, u := range p.Unmodelled {
			fmt.Fprintf(w, "- %s: %s; left out: %s\n", mdEscape(u.Fault), mdEscape(u.Seen), mdEscape(u.LeftOut))
		}
	}
	if gs := probe.GroupFindings(p.Findings); len(gs) > 0 {
		fmt.Fprint(w, "\n## Findings\n\nFrom the experiments' journals; the evidence is the first one's:\n\n")
		for _, g := range gs {
			fmt.Fprintf(w, "- `%s` (%s): %s\n", g.Code, mdEscape(probesOf(g)), mdEscape(g.Evidence))
		}
	}
	fmt.Fprint(w, "\n## Conformance\n\n")
	for _, l := range v.conformance {
		fmt.Fprintln(w, "- "+l)
	}
	return nil
}

// view is a profile read once for its renderers: each lays out the same
// rows in its own syntax.
type view struct {
	duration, plan string
	// notes are what makes the profile no result, or a partial one
	// (interrupted, nothing measured or learnt, not deterministic).
	notes     []note
	warmUpOff string // why the warm-up was off, or ""
	// survival says policy.survivesOutageMs, one line per kind
	// (probe.SurvivalLine): shown first, the figure an unattended loop's
	// owner wants.
	survival    []string
	faults      []faultRow
	policy      [][3]string
	conformance []string
}

type note struct{ title, text string }

// faultRow is what the client did with one fault, as the rows print it.
type faultRow struct {
	name, retried, waits, end, note string
	attempts                        int
}

func viewOf(p *probe.Profile) view {
	v := view{duration: durationOf(p), policy: policyLines(p), conformance: conformanceLines(p), survival: survivalLines(p)}
	if p.Plan != nil {
		v.plan = fmt.Sprintf("at most %s (%s)", probeSecs(p.Plan.EstimatedMs), p.Plan.Bound)
	}
	interrupted := ""
	if p.Interrupted {
		interrupted = "the profile holds what was learnt before the probe was stopped"
	}
	for _, n := range []note{
		{"Interrupted", interrupted},
		{"Nothing measured", p.Unreached},
		{"Nothing learnt", p.LearntNothing},
		{"Not deterministic", p.Nondeterministic},
	} {
		if n.text != "" {
			v.notes = append(v.notes, n)
		}
	}
	if wu := p.WarmUp; wu != nil && !wu.Used {
		v.warmUpOff = wu.Reason
	}
	for _, f := range p.Faults {
		name := f.Fault
		if f.Sample > 0 {
			name = fmt.Sprintf("%s #%d", f.Fault, f.Sample)
		}
		v.faults = append(v.faults, faultRow{name: name, retried: triState(f.Retried), attempts: f.Attempts,
			waits: ints(f.WaitsMs), end: f.End, note: f.Note})
	}
	return v
}

// survivalKeys are the kinds of the profile's survival figures in the
// order the provider's probe measures them (probe.OutageKinds), then any
// other, sorted (a profile of a provider this build does not know).
func survivalKeys(p *probe.Profile) []string {
	var keys []string
	if prov, err := probe.LookupProvider(p.Provider); err == nil {
		for _, k := range probe.OutageKinds(prov) {
			if _, ok := p.Policy.SurvivesOutageMs[k.Key]; ok {
				keys = append(keys, k.Key)
			}
		}
	}
	var rest []string
	for k := range p.Policy.SurvivesOutageMs {
		if !slices.Contains(keys, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(keys, rest...)
}

// survivalLines say the survival figures, one line per kind.
func survivalLines(p *probe.Profile) []string {
	var out []string
	for _, k := range survivalKeys(p) {
		out = append(out, probe.SurvivalLine(k, p.Policy.SurvivesOutageMs[k]))
	}
	return out
}

// policyLines are the figures: name, value, confidence.
func policyLines(p *probe.Profile) [][3]string {
	po := p.Policy
	var ls [][3]string
	add := func(fig, label, val string) {
		c := p.Confidence[fig]
		conf := "inconclusive"
		if c.Level != "" {
			conf = c.Level + ": " + c.Basis
		}
		ls = append(ls, [3]string{label, val, conf})
	}
	for _, k := range survivalKeys(p) {
		val := "unknown"
		switch sv := po.SurvivesOutageMs[k]; {
		case sv == nil:
		case sv.AtLeast:
			val = fmt.Sprintf("at least %d", sv.Ms)
		case sv.High != nil:
			val = fmt.Sprintf("%d [%d, %d]", sv.Ms, sv.Low, *sv.High)
			if sv.Unconfirmed != "" {
				val += " unconfirmed"
			}
		}
		add("policy.survivesOutageMs."+k, "survives steady "+k+" (ms)", val)
	}
	add("policy.maxRetries", "max retries", ptrString(po.MaxRetries))
	add("policy.backoff.initialMs", "initial wait (ms)", ptrString(po.Backoff.InitialMs))
	add("policy.backoff.multiplier", "multiplier", ptrString(po.Backoff.Multiplier))
	maxMs := ptrString(po.Backoff.MaxMs)
	if _, ok := p.Confidence["policy.backoff.maxMs"]; ok && po.Backoff.MaxMs == nil {
		maxMs = "never reached"
	}
	add("policy.backoff.maxMs", "max wait (ms)", maxMs)
	j := "unknown"
	if po.Backoff.Jitter != nil {
		j = fmt.Sprintf("×%.2f–%.2f", po.Backoff.Jitter.MinFactor, po.Backoff.Jitter.MaxFactor)
		if k := po.Backoff.Jitter.Kind; k != "" {
			j += " (" + k + ")"
		}
	}
	add("policy.backoff.jitter", "jitter", j)
	add("policy.retryAfter.seconds", "Retry-After seconds", boolString(po.RetryAfter.Seconds))
	add("policy.retryAfter.ms", "retry-after-ms", boolString(po.RetryAfter.Ms))
	add("policy.retryAfter.httpDate", "Retry-After HTTP-date", boolString(po.RetryAfter.HTTPDate))
	add("policy.retryAfter.large", "large Retry-After", orUnknown(po.RetryAfter.Large))
	add("policy.retryAfter.ceilingMs", "Retry-After ceiling (ms)", ptrString(po.RetryAfter.CeilingMs))
	add("policy.timeoutMs", "hung attempt timeout (ms)", ptrString(po.TimeoutMs))
	nl := "not seen"
	if po.NestedLoops.Seen {
		nl = fmt.Sprintf("seen: bursts of %d attempts", po.NestedLoops.Inner)
		if po.NestedLoops.Outer > 0 {
			nl += fmt.Sprintf(", %d more bursts", po.NestedLoops.Outer)
		}
	}
	ls = append(ls, [3]string{"nested loops", nl, ""})
	fb := "none seen"
	if len(po.Fallbacks) > 0 {
		fb = strings.Join(po.Fallbacks, "; ")
	}
	add("policy.fallbacks", "fallbacks (model switches)", fb)
	return ls
}

// conformanceLines: per preset, how many rules hold, then each rule that
// differs (the JSON has every line).
func conformanceLines(p *probe.Profile) []string {
	var out []string
	var order []string
	type tally struct {
		holds, n int
		differs  []string
	}
	ts := map[string]*tally{}
	for _, c := range p.Conformance {
		t := ts[c.Preset]
		if t == nil {
			t = &tally{}
			ts[c.Preset] = t
			order = append(order, c.Preset)
		}
		if c.State == probe.Unknown {
			continue
		}
		t.n++
		if c.State == probe.Holds {
			t.holds++
		} else {
			t.differs = append(t.differs, fmt.Sprintf("%s: preset %s, client %s", c.Rule, c.Want, c.Got))
		}
	}
	for _, name := range order {
		t := ts[name]
		line := fmt.Sprintf("%s: %d of %d rules hold", name, t.holds, t.n)
		if len(t.differs) > 0 {
			line += "; differs: " + strings.Join(t.differs, "; ")
		}
		out = append(out, line)
	}
	return out
}

func triState(b *bool) string {
	if b == nil {
		return "?"
	}
	if *b {
		return "yes"
	}
	return "no"
}

func boolString(b *bool) string {
	if b == nil {
		return "unknown"
	}
	if *b {
		return "honoured"
	}
	return "ignored"
}

func ptrString[T any](p *T) string {
	if p == nil {
		return "unknown"
	}
	return fmt.Sprint(*p)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func ints(xs []int64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ", ")
}

func probeSecs(ms int64) string { return fmt.Sprintf("%.1fs", float64(ms)/1000) }

// durationOf is the probe's wall time, and against what the client's own
// waits impose (probe.Floor) when the profile says it.
func durationOf(p *probe.Profile) string {
	d := probeSecs(p.DurationMs)
	f := p.Floor
	if f == nil {
		return d
	}
	if f.ExhaustionMs <= 0 {
		return d + ", the exhaustion waited nothing"
	}
	d += fmt.Sprintf(", %.1f× the exhaustion's waits (%s)", f.Ratio, probeSecs(f.ExhaustionMs))
	if f.ExperimentsMs > f.ExhaustionMs {
		d += fmt.Sprintf(", %.1f× the longest experiment's (%s: %s)", f.ExperimentsRatio, probeSecs(f.ExperimentsMs), f.ExperimentsBy)
	}
	return d
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// probesOf names the experiments that raised a finding: "probe 529-1" or
// "3 probes: 529-1, 529-2, 529-3".
func probesOf(g probe.FindingGroup) string {
	if len(g.Probes) == 1 {
		return "probe " + g.Probes[0]
	}
	return fmt.Sprintf("%d probes: %s", len(g.Probes), strings.Join(g.Probes, ", "))
}
