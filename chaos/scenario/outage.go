package scenario

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/retrylab/retrylab/chaos/fault"
	"go.yaml.in/yaml/v3"
)

// Outage is a scenario's outage: key, a time-shaped outage (DESIGN.md,
// "Outages, fleets, findings and the matrix"). Its phases follow one another
// in policy time from the arrival of the scenario's first attempt; each
// attempt meets a fault drawn from the mix of the phase of the moment it
// arrives, past the last phase ok. The attempts: list, when the scenario
// has one too, comes first: attempt k ≤ len(attempts) meets attempts[k-1],
// the later ones the outage.
type Outage struct {
	// Seed seeds the draws; nil: the run's --seed (chaos run's Seed).
	Seed   *int64  `yaml:"seed"`
	Phases []Phase `yaml:"phases"`
}

// Phase is one stretch of an outage: For long (policy time), each attempt
// arriving in it meets a fault of Mix, drawn by weight.
type Phase struct {
	For Duration   `yaml:"for"`
	Mix []MixEntry `yaml:"mix"`
}

// MixEntry is one fault of a phase's mix and its weight: {weight: W, <one
// fault>}, the fault decoded as an attempts[] entry is.
type MixEntry struct {
	Weight int
	Fault  Fault
}

// MaxMixWeight bounds a mix entry's weight.
const MaxMixWeight = 1_000_000

// Draw is what attempt n (1-based, the mock's numbering: arrival order)
// meets from the outage when it arrives at policy time at since the outage
// began, with the draws seeded by seed: the fault, the phase (1-based; 0
// past the last phase, where it is ok) and the mix entry (1-based; 0 past
// the last phase).
//
// Each attempt's draw is its own: a stream keyed by (seed, n), so the
// same seed gives the same draws whatever the timing, and the draw of
// attempt n does not depend on how many attempts came before it in a phase;
// only the phase depends on when the attempt arrived.
func (o *Outage) Draw(seed int64, n int, at time.Duration) (f Fault, phase, entry int) {
	var start time.Duration
	for i, p := range o.Phases {
		if at >= start+p.For.D() {
			start += p.For.D()
			continue
		}
		total := 0
		for _, m := range p.Mix {
			total += m.Weight
		}
		if total <= 0 {
			return Fault{}, i + 1, 0
		}
		r := drawRand(seed, n).IntN(total)
		for j, m := range p.Mix {
			if r < m.Weight {
				return m.Fault, i + 1, j + 1
			}
			r -= m.Weight
		}
	}
	return Fault{}, 0, 0
}

// drawRand is attempt n's own random source under seed: ChaCha8 keyed by
// the seed and the attempt's number, so that neighbouring seeds and
// neighbouring attempts draw independently.
func drawRand(seed int64, n int) *rand.Rand {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[0:], uint64(seed))
	binary.LittleEndian.PutUint64(key[8:], uint64(n))
	copy(key[16:], "retrylab outage ")
	return rand.New(rand.NewChaCha8(key))
}

// Total is the outage's length: the sum of its phases.
func (o *Outage) Total() time.Duration {
	var t time.Duration
	for _, p := range o.Phases {
		t += p.For.D()
	}
	return t
}

// SeedOr is the seed the draws use: the outage's own, else runSeed.
func (o *Outage) SeedOr(runSeed int64) int64 {
	if o.Seed != nil {
		return *o.Seed
	}
	return runSeed
}

// MetFault is the fault attempt n (1-based) met, as the mock's journal
// records it: attempts[n-1] for the first len(attempts) attempts, else the
// outage's phase's mix entry (both 1-based; 0: ok past the last phase), else
// ok.
func (sc *Scenario) MetFault(n, phase, entry int) Fault {
	if n >= 1 && n <= len(sc.Attempts) {
		return sc.Attempts[n-1]
	}
	if o := sc.Outage; o != nil && phase >= 1 && phase <= len(o.Phases) {
		if mix := o.Phases[phase-1].Mix; entry >= 1 && entry <= len(mix) {
			return mix[entry-1].Fault
		}
	}
	return Fault{}
}

// WithMet is sc with its attempts: list replaced by the faults its
// attempts met (met[k] is attempt k+1's), and no outage: what the checks,
// written against a list of faults, compare the client with. sc itself is
// not changed; without an outage or limits: it is returned as it is.
func (sc *Scenario) WithMet(met []Fault) *Scenario {
	if sc == nil || sc.Outage == nil && sc.Limits == nil {
		return sc
	}
	c := *sc
	c.Attempts = append([]Fault(nil), met...)
	c.Outage = nil
	return &c
}

// decodeMixEntry decodes one mix entry: weight, and the keys of exactly
// one fault kind, which the fault registry decodes as it decodes an
// attempts[] entry (so its problems point at the entry's own lines).
func (d *decoder) decodeMixEntry(n *yaml.Node, e *MixEntry, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "write {weight: 3, status: 529}: a weight and one fault", "want a mapping, got %s", kindName(n))
		return
	}
	e.Fault.Line = n.Line
	rest := &yaml.Node{Kind: yaml.MappingNode, Tag: n.Tag, Line: n.Line, Column: n.Column}
	var weight *yaml.Node
	var kinds []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "weight" && weight == nil {
			weight = v
			continue
		}
		if _, ok := fault.Lookup(k.Value); ok {
			kinds = append(kinds, k.Value)
		}
		rest.Content = append(rest.Content, k, v)
	}
	if weight == nil {
		d.errorf(n, join(path, "weight"), "add weight: 1 (weights are relative: {weight: 3} is drawn three times as often as {weight: 1})", "mix entry has no weight")
	} else if x, err := strconv.Atoi(weight.Value); weight.Kind != yaml.ScalarNode || err != nil || x < 1 || x > MaxMixWeight {
		d.errorf(weight, join(path, "weight"), fmt.Sprintf("write a whole number from 1 to %d", MaxMixWeight), "weight must be a positive whole number, got %s", describeScalar(weight))
	} else {
		e.Weight = x
	}
	switch len(kinds) {
	case 0:
		if len(rest.Content) == 0 {
			d.errorf(n, path, "add the fault, e.g. status: 529, or ok: {} for a healthy answer; kinds: "+strings.Join(fault.Names(), ", "), "mix entry names no fault")
			return
		}
	case 1:
	default:
		d.errorf(n, path, "give each mix entry one kind, with its own weight: {weight: 2, "+kinds[0]+": ...}, {weight: 1, "+kinds[1]+": ...}",
			"mix entry has %d fault kinds (%s)", len(kinds), strings.Join(kinds, ", "))
		return
	}
	e.Fault.Kind = fault.Decode(faultDecoder{d}, rest, path)
	if e.Fault.Kind == nil && len(kinds) == 1 {
		// status: 0, drop: null …: an ok attempt, as in attempts[].
		return
	}
	name := fault.NameOf(e.Fault.Kind)
	switch e.Fault.Kind.(type) {
	case fault.PreConnecter:
		d.errorf(n, join(path, name), "an outage picks an attempt's fault when its request arrives, after it connected; put "+name+" in attempts: (the first attempts), or use drop: {afterBytes: 0}",
			"%s cannot be in an outage mix: its toxics go on the proxy before the attempt connects", name)
	case fault.RequestOptional:
		d.errorf(n, join(path, name), "put it in attempts: (the first attempts)", "%s cannot be in an outage mix: its attempt may have no request to pick a phase by", name)
	}
}

// validateOutage checks what decoding alone does not: an outage has
// phases, each of a positive length with a mix.
func (d *decoder) validateOutage(n *yaml.Node, o *Outage) {
	if n == nil || o == nil || n.Kind != yaml.MappingNode {
		if n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			d.errorf(n, "outage", "give phases: [{for: 60s, mix: [{weight: 1, status: 529}]}], or remove outage:", "outage is empty")
		}
		return
	}
	fields := mapping(n)
	if len(o.Phases) == 0 {
		at := fields["phases"]
		if at == nil {
			at = n
		}
		d.errorf(at, "outage.phases", "give phases: [{for: 60s, mix: [{weight: 1, status: 529}]}]", "an outage needs at least one phase")
		return
	}
	seq := fields["phases"]
	for i, p := range o.Phases {
		path := fmt.Sprintf("outage.phases[%d]", i)
		var pn *yaml.Node
		if seq != nil && i < len(seq.Content) {
			pn = seq.Content[i]
		}
		pf := mapping(pn)
		if pn != nil && pn.Kind == yaml.ScalarNode && pn.Tag == "!!null" {
			d.errorf(pn, path, "give the phase for: and mix:, e.g. {for: 60s, mix: [{weight: 1, status: 529}]}", "phase is empty")
			continue
		}
		if pn == nil || pn.Kind != yaml.MappingNode {
			continue // decoding said what it is
		}
		if p.For <= 0 {
			at := pf["for"]
			if at == nil {
				at = pn
			}
			d.errorf(at, path+".for", "give the phase a length in policy time, e.g. for: 90s", "a phase needs a positive for:")
		}
		if len(p.Mix) == 0 {
			at := pf["mix"]
			if at == nil {
				at = pn
			}
			d.errorf(at, path+".mix", "give mix: [{weight: 1, status: 529}] (one entry of weight 1 is a steady storm; ok: {} a healthy answer)", "a phase needs a non-empty mix:")
		}
	}
}

// describeScalar is n's value, quoted, or its kind when it is no scalar.
func describeScalar(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return kindName(n)
	}
	return strconv.Quote(n.Value)
}
