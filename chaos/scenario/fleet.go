package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/chaos/fault"
)

// Fleet is fleet:, N copies of the scenario's client against one mock
// behind one proxy (docs/chaos.md, "Fleets"). Each client meets the
// scenario's attempts: as its own k-th attempts; the outage: phases run on
// the fleet's shared clock, from the first arrival of any client.
type Fleet struct {
	Clients int `yaml:"clients"`
	// Stagger is the gap between two clients' starts, in policy time
	// (scaled by the time scale as every wait is); 0 starts all at once.
	Stagger Duration `yaml:"stagger"`
}

// FleetExpect is expect.fleet: what the fleet as a whole must show. A nil
// or zero field is not checked.
type FleetExpect struct {
	// Survived is how many clients at least must end with success.
	Survived *int `yaml:"survived"`
	// Amplification and Synchrony compare the fleet's figures with a
	// bound: "<= 1.5".
	Amplification *Comparison `yaml:"amplification"`
	Synchrony     *Comparison `yaml:"synchrony"`
	// RecoveredWithin bounds recoveryMs, in policy time; it needs an
	// outage: to recover from.
	RecoveredWithin Duration `yaml:"recoveredWithin"`
}

// Comparison is a figure's bound written as a string: an operator (<, <=,
// >, >=) then a finite number, "<= 1.5".
type Comparison struct {
	Op    string
	Value float64
}

// String writes c back as it is written in a scenario file.
func (c Comparison) String() string {
	return c.Op + " " + strconv.FormatFloat(c.Value, 'g', -1, 64)
}

// Holds reports whether v satisfies c.
func (c Comparison) Holds(v float64) bool {
	switch c.Op {
	case "<":
		return v < c.Value
	case "<=":
		return v <= c.Value
	case ">":
		return v > c.Value
	case ">=":
		return v >= c.Value
	}
	return false
}

// Below reports whether c bounds its figure from above (< or <=).
func (c Comparison) Below() bool { return strings.HasPrefix(c.Op, "<") }

// comparisonOps are the operators a Comparison takes, longest first.
var comparisonOps = []string{"<=", ">=", "<", ">"}

// ParseComparison parses "<= 1.5": an operator, optional spaces, a finite
// number. The error says what is wrong; ComparisonHint what to write.
func ParseComparison(s string) (Comparison, error) {
	t := strings.TrimSpace(s)
	for _, op := range comparisonOps {
		rest, ok := strings.CutPrefix(t, op)
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		v, err := strconv.ParseFloat(rest, 64)
		if err != nil || rest == "" {
			return Comparison{}, fmt.Errorf("%q after %s is not a number", rest, op)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Comparison{}, fmt.Errorf("%q is not a finite number", rest)
		}
		if math.Abs(v) > MaxComparisonValue {
			return Comparison{}, fmt.Errorf("%v is beyond ±%g", v, float64(MaxComparisonValue))
		}
		return Comparison{Op: op, Value: v}, nil
	}
	if strings.HasPrefix(t, "=") || strings.HasPrefix(t, "!") {
		return Comparison{}, fmt.Errorf("%q: a measured rate is bounded, not matched", s)
	}
	return Comparison{}, fmt.Errorf("%q does not start with <, <=, > or >=", s)
}

// ComparisonHint says how a comparison is written.
const ComparisonHint = `write an operator and a number as a string: "<= 1.5" (operators <, <=, >, >=)`

// decodeComparison decodes a Comparison from its string.
func decodeComparison(n *yaml.Node, c *Comparison) *nodeError {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return &nodeError{node: n, msg: "want a comparison, got " + kindName(n), hint: ComparisonHint}
	}
	v, err := ParseComparison(n.Value)
	if err != nil {
		return &nodeError{node: n, msg: err.Error(), hint: ComparisonHint}
	}
	*c = v
	return nil
}

// FleetClients is how many clients run sc: fleet.clients, 1 without a fleet.
func (sc *Scenario) FleetClients() int {
	if sc.Fleet == nil || sc.Fleet.Clients < 1 {
		return 1
	}
	return sc.Fleet.Clients
}

// validateFleet checks fleet: and expect.fleet: bounds, kinds a shared
// proxy cannot give one client alone, and expectations that need what the
// scenario lacks.
func (d *decoder) validateFleet(top map[string]*yaml.Node, sc *Scenario) {
	fn := top["fleet"]
	exp := mapping(top["expect"])
	en := exp["fleet"]
	if en != nil && sc.Fleet == nil {
		d.c.Add(en, "expect.fleet", "expect.fleet needs a fleet", "add fleet: {clients: 10}, or remove expect.fleet")
	}
	if fn != nil && fn.Kind == yaml.ScalarNode && fn.Tag == "!!null" {
		d.c.Add(fn, "fleet", "fleet is empty", "give the number of clients: fleet: {clients: 10, stagger: 200ms}")
		return
	}
	if sc.Fleet == nil || fn == nil || fn.Kind != yaml.MappingNode {
		return
	}
	ff := mapping(fn)
	switch c := sc.Fleet.Clients; {
	case ff["clients"] == nil:
		d.c.Add(fn, "fleet.clients", "a fleet needs clients", "give the number of clients: fleet: {clients: 10}")
	case c < 1:
		d.errorf(ff["clients"], "fleet.clients", "a fleet has at least 1 client", "fleet.clients is %d", c)
	case c > MaxFleetClients:
		d.errorf(ff["clients"], "fleet.clients", fmt.Sprintf("a fleet has at most %d clients", MaxFleetClients), "fleet.clients is %d, too many", c)
	}
	if s := sc.Fleet.Stagger.D(); s > MaxFleetStagger {
		d.errorf(ff["stagger"], "fleet.stagger", fmt.Sprintf("the gap between two clients' starts is at most %s", MaxFleetStagger), "stagger %s is too long", s)
	}
	// One proxy serves every client at once: toxics put on it for one
	// client's attempt would meet whichever connection came next.
	for i, f := range sc.Attempts {
		if fault.UsesProxy(f.Kind) {
			d.c.Add(nodeAt(top["attempts"], i), fmt.Sprintf("attempts[%d]", i),
				fmt.Sprintf("%s needs the proxy to itself, which a fleet's clients share", f.Name()),
				"use a kind the mock makes itself (status, sseError, truncate, stall, slow, malformed, hang), or remove fleet:")
		}
	}
	if sc.Outage != nil {
		for i, p := range sc.Outage.Phases {
			for j, m := range p.Mix {
				if fault.UsesProxy(m.Fault.Kind) {
					d.c.AddAt(m.Fault.Line, 0, fmt.Sprintf("outage.phases[%d].mix[%d]", i, j),
						fmt.Sprintf("%s needs the proxy to itself, which a fleet's clients share", m.Fault.Name()),
						"use a kind the mock makes itself (status, sseError, truncate, stall, slow, malformed), or remove fleet:")
				}
			}
		}
	}
	if sc.Expect.Fleet == nil || en == nil || en.Kind != yaml.MappingNode {
		return
	}
	ef := mapping(en)
	if s := sc.Expect.Fleet.Survived; s != nil && (*s < 0 || *s > sc.Fleet.Clients) {
		d.errorf(ef["survived"], "expect.fleet.survived", fmt.Sprintf("between 0 and the fleet's %d clients", sc.Fleet.Clients), "%d clients cannot survive", *s)
	}
	if c := sc.Expect.Fleet.Synchrony; c != nil && (c.Value < 0 || c.Value > 1) {
		d.errorf(ef["synchrony"], "expect.fleet.synchrony", "synchrony is a share, from 0 to 1", "bound %v is outside [0, 1]", c.Value)
	}
	if c := sc.Expect.Fleet.Amplification; c != nil && c.Value < 1 {
		d.errorf(ef["amplification"], "expect.fleet.amplification", "amplification is attempts ÷ requests, 1 or more", "bound %v is below 1", c.Value)
	}
	if sc.Expect.Fleet.RecoveredWithin > 0 && sc.Outage == nil {
		d.c.Add(ef["recoveredWithin"], "expect.fleet.recoveredWithin", "recovery is measured from the end of the outage, and there is none",
			"add outage: {phases: [...]}, or remove recoveredWithin")
	}
}

// nodeAt is the i-th item of the sequence n, or n itself.
func nodeAt(n *yaml.Node, i int) *yaml.Node {
	if n != nil && n.Kind == yaml.SequenceNode && i < len(n.Content) {
		return n.Content[i]
	}
	return n
}
