package probe

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/retrylab/retrylab/retry"
)

// PolicyYAML writes the profile as a retry policy file (docs/policy.md)
// that a scenario's `client.policy: FILE` loads, so `chaos run` with
// `delays: policy` verifies the same client against what was learnt. What
// the probe could not tell is left out (the preset-less default applies)
// and named in a comment. The file parses with policyfile.Parse; the
// tests check that it round-trips.
func PolicyYAML(p *Profile, prov Provider) string {
	return policyYAML(p, prov, leftOut{}, nil)
}

// policyYAML is PolicyYAML leaving out what out says (verify.go), with a
// comment for each behaviour of un.
func policyYAML(p *Profile, prov Provider, out leftOut, un []Unmodelled) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Learnt by `retrylab chaos probe` (%s) from: %s\n", Schema, p.Client)
	fmt.Fprintf(&b, "# provider %s, %d exhaustion sample(s), time scale %g.\n", p.Provider, p.Samples, p.TimeScale)
	for _, in := range p.Inconclusive {
		if strings.HasPrefix(in.Figure, "policy.survivesOutageMs.") {
			continue // a figure of the client, not of a policy file
		}
		fmt.Fprintf(&b, "# not learnt: %s: %s\n", in.Figure, in.Reason)
	}
	for _, l := range unknownLines(p) {
		fmt.Fprintln(&b, l)
	}
	for _, u := range un {
		fmt.Fprintf(&b, "# not modelled: %s: %s; left out of delays: policy: %s\n", u.Fault, u.Seen, u.LeftOut)
	}
	fmt.Fprintf(&b, "name: probed\nenabled: true\n")
	statuses, types, streamed := decisions(p, prov, out)
	streamed = streamed || out.streamed
	resends := out.filter(learntResends(p, prov))
	for _, r := range resends {
		// The re-sends were its retries: the backoff loop does not retry
		// these once they are spent (the probe saw no later retry).
		for _, st := range r.statuses {
			statuses[st] = false
		}
		for _, t := range r.types {
			types[t] = false
		}
	}
	fmt.Fprintf(&b, "streamErrors: %t\n", streamed)
	if hs, ok := honorsShouldRetry(p); out.header {
		fmt.Fprintf(&b, "honorShouldRetry: false\n") // left out with the faults that carried it
	} else if ok {
		fmt.Fprintf(&b, "honorShouldRetry: %t\n", hs)
	}
	if t := p.Policy.TimeoutMs; t != nil {
		fmt.Fprintf(&b, "attemptTimeout: %s\n", time.Duration(*t)*time.Millisecond)
	}
	b.WriteString(strategyYAML(p, out.all))
	writeRetryAfter(&b, p)
	b.WriteString(resendsYAML(resends))
	if len(statuses) > 0 {
		b.WriteString("statusRetry:\n")
		for _, st := range sortedKeys(statuses) {
			fmt.Fprintf(&b, "  %d: %t\n", st, statuses[st])
		}
	}
	if len(types) > 0 {
		b.WriteString("failureTypes:\n")
		names := make([]string, 0, len(types))
		for t := range types {
			names = append(names, t)
		}
		sort.Strings(names)
		for _, t := range names {
			if out.types[t] {
				fmt.Fprintf(&b, "  %s: {retry: true, maxRetries: unknown, initialDelay: unknown, respectRetryAfter: false}\n", t)
				continue
			}
			fmt.Fprintf(&b, "  %s: {retry: %t}\n", t, types[t])
		}
	}
	return b.String()
}

// decisions collects the retried / not retried findings: per HTTP status
// (plain status faults), per failure type (network and stream faults), and
// whether any stream-level failure is retried.
func decisions(p *Profile, prov Provider, out leftOut) (statuses map[int]bool, types map[string]bool, streamed bool) {
	statuses, types = map[int]bool{}, map[string]bool{}
	for t := range out.types {
		types[t] = true // written with its limit and waits unknown
	}
	for _, fr := range p.Faults {
		f, ok := prov.Fault(fr.Fault)
		if !ok || fr.Retried == nil || fr.Sample > 0 {
			continue
		}
		e := f.Err
		c := retry.Classify(&e)
		switch {
		case out.drops(f):
			// Left out: the failure type's strategy decides.
		case f.Group == "status":
			statuses[f.Err.Status] = *fr.Retried
		case f.Group == "stream" || f.Group == "network":
			if _, seen := types[string(c.Type)]; !seen || *fr.Retried {
				types[string(c.Type)] = *fr.Retried
			}
			streamed = streamed || (f.Err.Streamed && *fr.Retried)
		}
	}
	return statuses, types, streamed
}

// honorsShouldRetry says whether x-should-retry decided, when the probes
// show it: true overrode a 400 that is otherwise final, or false stopped a
// 503 that is otherwise retried.
func honorsShouldRetry(p *Profile) (bool, bool) {
	get := func(name string) *bool {
		for _, fr := range p.Faults {
			if fr.Fault == name && fr.Sample == 0 {
				return fr.Retried
			}
		}
		return nil
	}
	t, f, s400, s503 := get("400 x-should-retry true"), get("503 x-should-retry false"), get("400"), get("503")
	if t != nil && s400 != nil && *t != *s400 {
		return true, true
	}
	if f != nil && s503 != nil && *f != *s503 {
		return true, true
	}
	if t != nil && f != nil {
		return false, true
	}
	return false, false
}

// strategyYAML is the `all:` strategy: the retry limit and the backoff.
// What the probe did not learn is written `unknown`, which the policy
// loader reads as "not checked" (retry.Strategy.LimitUnknown,
// WaitsUnknown): a written limit or wait the probe never saw would make
// `delays: policy` fail the very client it was learnt from (an interrupted
// probe wrote `all: {retry: true}`, which loads as one attempt).
func strategyYAML(p *Profile, leaveOut bool) string {
	parts := []string{"retry: true"}
	if leaveOut {
		parts = append(parts, "maxRetries: unknown", "initialDelay: unknown")
	} else if m := p.Policy.MaxRetries; m != nil && *m > 0 {
		parts = append(parts, fmt.Sprintf("maxRetries: %d", *m))
	} else {
		parts = append(parts, "maxRetries: unknown")
	}
	switch why := waitsUnknown(p); {
	case leaveOut:
		// Written above: the loop is not modelled.
	case why != "":
		parts = append(parts, "initialDelay: unknown")
	default:
		bo := p.Policy.Backoff
		parts = append(parts, "initialDelay: "+msDuration(*bo.InitialMs))
		kind, mult := "exponential", 2.0 // one retry at most: the multiplier is never used
		if bo.Multiplier != nil {
			mult = *bo.Multiplier
			if mult == 1 {
				kind = "constant"
			}
		}
		parts = append(parts, "kind: "+kind, fmt.Sprintf("multiplier: %g", mult))
		if bo.MaxMs != nil {
			parts = append(parts, "maxDelay: "+msDuration(*bo.MaxMs))
		}
		if j := bo.Jitter; j != nil {
			parts = append(parts, jitterYAML(*j)...)
		}
	}
	ra := p.Policy.RetryAfter
	if ra.Seconds != nil || ra.Ms != nil {
		respect := (ra.Seconds != nil && *ra.Seconds) || (ra.Ms != nil && *ra.Ms)
		parts = append(parts, fmt.Sprintf("respectRetryAfter: %t", respect))
	}
	return "all: {" + strings.Join(parts, ", ") + "}\n"
}

// maxMultiplier is the largest multiplier the policy loader takes.
const maxMultiplier = 100

// waitsUnknown says why the backoff's waits cannot be written, or "":
// no initial wait was fitted, or no multiplier while more than one retry
// may come, or one the policy loader does not take.
func waitsUnknown(p *Profile) string {
	bo := p.Policy.Backoff
	m := p.Policy.MaxRetries
	switch {
	case bo.InitialMs == nil:
		return "the initial wait was not learnt"
	case bo.Multiplier == nil && (m == nil || *m > 1):
		return "the multiplier was not learnt"
	case bo.Multiplier != nil && (*bo.Multiplier <= 0 || *bo.Multiplier > maxMultiplier):
		return fmt.Sprintf("the multiplier fitted (%g) is not one a policy takes (0 to %d)", *bo.Multiplier, maxMultiplier)
	}
	return ""
}

// unknownLines are the comment lines saying what the `all:` strategy
// leaves unchecked, and what was seen of it.
func unknownLines(p *Profile) []string {
	var out []string
	if m := p.Policy.MaxRetries; m == nil || *m == 0 {
		l := "# maxRetries: unknown: not checked (a client may stop retrying after any attempt)"
		if m != nil {
			// The limit is measured on the exhaustion's fault: not retried,
			// it says nothing of the limit of the failures that are.
			l = "# maxRetries: unknown: the exhaustion's failure is not retried, so the limit of those that are is not known: not checked"
		}
		if n := mostRetries(p); n > 0 {
			l += fmt.Sprintf("; at least %d retr%s seen in one run", n, map[bool]string{true: "y", false: "ies"}[n == 1])
		}
		out = append(out, l)
	}
	if why := waitsUnknown(p); why != "" {
		out = append(out, "# initialDelay: unknown: the waits are not checked ("+why+")")
	}
	return out
}

// mostRetries is the most retries seen in one run of a fault.
func mostRetries(p *Profile) int {
	n := 0
	for _, fr := range p.Faults {
		n = max(n, fr.Attempts-1)
	}
	return n
}

// jitterYAML names the policy jitter: the form the fit found, else the
// one whose band holds the observed one.
func jitterYAML(j Jitter) []string {
	for _, f := range families {
		if f.String() != j.Kind {
			continue
		}
		if f.name == "proportional" || f.name == "additive" {
			return []string{"jitter: " + f.name, fmt.Sprintf("jitterFraction: %.2f", f.fraction)}
		}
		return []string{"jitter: " + f.name}
	}
	switch {
	case j.MaxFactor-j.MinFactor < 0.05:
		return []string{"jitter: none"}
	case j.MaxFactor <= 1.05 && j.MinFactor >= 0.7:
		return []string{"jitter: sdk"}
	case j.MaxFactor <= 1.05 && j.MinFactor >= 0.45:
		return []string{"jitter: equal"}
	case j.MaxFactor <= 1.05:
		return []string{"jitter: full"}
	}
	f := max(1-j.MinFactor, j.MaxFactor-1)
	return []string{"jitter: proportional", fmt.Sprintf("jitterFraction: %.2f", min(f, 1))}
}

// writeRetryAfter writes the header rule (retry-after only when the
// seconds form is honoured and the ms form is not) and the learnt
// ceiling (ceilingKey).
func writeRetryAfter(b *strings.Builder, p *Profile) {
	ra := p.Policy.RetryAfter
	var parts []string
	if ra.Seconds != nil && *ra.Seconds && ra.Ms != nil && !*ra.Ms {
		parts = append(parts, "header: retry-after")
	}
	if ra.Large == "capped" && ra.CapMs != nil {
		fmt.Fprintf(b, "# retryAfter.cap %s: a Retry-After of %s was waited %s (the cap learnt; the backoff's first wait is far shorter)\n",
			msDuration(float64(*ra.CapMs)), FormatMs(float64(ra.LargeMs)), FormatMs(float64(*ra.CapMs)))
		parts = append(parts, "cap: "+msDuration(float64(*ra.CapMs)))
	}
	if key, v, ok := ceilingKey(ra); ok {
		br := ra.CeilingBracketMs
		fmt.Fprintf(b, "# retryAfter.%s %s: the Retry-After ceiling learnt, bracket [%s, %s] (%s honoured, %s %s); any value from %s up to %s holds every run; a Retry-After of 0 was not probed (zero: the loader's auto)\n",
			key, msDuration(float64(v)), FormatMs(float64(br[0])), FormatMs(float64(br[1])), FormatMs(float64(br[0])), FormatMs(float64(br[1])),
			map[string]string{"maxUsable": "its backoff instead", "ceiling": "not retried"}[key], FormatMs(float64(br[0])), FormatMs(float64(br[1])))
		parts = append(parts, key+": "+msDuration(float64(v)))
	}
	if len(parts) > 0 {
		b.WriteString("retryAfter: {" + strings.Join(parts, ", ") + "}\n")
	}
}

// ceilingKey is the policy file's key for the learnt Retry-After ceiling
// and its value: maxUsable when a value above it made the client wait
// its backoff instead (the AI SDK's < 60s), ceiling when it gave up (the
// error is final: openai-go's 2 minutes). Written only when the probe
// pinned the ceiling (ceilingMs set: the bracket [lo, hi] at most 2×
// wide); a wider bracket claims nothing between its ends, and the runs
// above it are left out with their failure type (verify.go). The value
// is the roundest in [lo, hi): lo was honoured and a value V is used
// while V ≤ the key's value, hi was not and V > it, so every value there
// holds every probe of the bisection; the roundest (60s for the AI SDK's
// [58s, 63s], 120s for openai-go's [116s, 126s]) is its source's.
func ceilingKey(ra RetryAfter) (string, int64, bool) {
	br := ra.CeilingBracketMs
	if ra.CeilingMs == nil || len(br) != 2 || br[0] <= 0 || br[0] >= br[1] {
		return "", 0, false
	}
	key := map[string]string{"backoff": "maxUsable", "gave up": "ceiling"}[ra.Large]
	if key == "" {
		return "", 0, false
	}
	return key, roundInside(br[0], br[1]), true
}

// roundInside is the roundest whole value in [lo, hi) ms: the smallest
// multiple of the coarsest of 1h, 10m, 5m, 1m, 30s, 10s, 5s, 1s there
// is one of, else lo.
func roundInside(lo, hi int64) int64 {
	for _, g := range []int64{3600, 600, 300, 60, 30, 10, 5, 1} {
		g *= 1000
		if x := (lo + g - 1) / g * g; x < hi {
			return x
		}
	}
	return lo
}

func msDuration(v float64) string {
	return (time.Duration(v) * time.Millisecond).String()
}

func sortedKeys(m map[int]bool) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}
