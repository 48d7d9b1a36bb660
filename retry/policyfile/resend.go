package policyfile

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/retry"
)

// resendFields are the keys of one entry of a policy's resends list; the
// strategy fields say how often and how long.
var resendFields = append([]string{"statuses", "streamed", "types", "restart", "noStream", "inRequest"}, strategyFields...)

// resends reads the resends list (Resend): each entry a mapping of
// statuses, streamed, types, restart and strategy fields. A list given
// replaces the preset's.
func (d *decoder) resends(v *yaml.Node, p *retry.Policy) {
	if v.Kind != yaml.SequenceNode {
		d.errf(v, "resends", "must be a list", "write e.g. [{statuses: [400], maxAttempts: 6, kind: none}]")
		return
	}
	p.Resends = nil
	for i, item := range v.Content {
		path := fmt.Sprintf("resends[%d]", i)
		m, _ := d.fields(item, path, resendFields)
		base := retry.Strategy{Retry: true, MaxAttempts: 1, Multiplier: 2, Kind: retry.NoBackoff, Jitter: retry.NoJitter}
		rs := retry.Resend{Strategy: d.strategy(only(item, strategyFields), path, base)}
		if n, ok := m["statuses"]; ok {
			rs.Statuses = d.statusList(n, join(path, "statuses"))
		}
		set(m, "streamed", path, &rs.Streamed, d.boolean)
		if n, ok := m["types"]; ok {
			rs.Types = d.typeList(n, join(path, "types"))
		}
		set(m, "restart", path, &rs.Restart, d.boolean)
		set(m, "noStream", path, &rs.NoStream, d.boolean)
		set(m, "inRequest", path, &rs.InRequest, d.boolean)
		if len(rs.Statuses) == 0 && !rs.Streamed {
			d.errf(item, path, "matches no failure", "give statuses: [400] or streamed: true")
		}
		p.Resends = append(p.Resends, rs)
	}
}

// statusList reads a list of HTTP statuses.
func (d *decoder) statusList(n *yaml.Node, path string) []int {
	if n.Kind != yaml.SequenceNode {
		d.errf(n, path, "must be a list", "write e.g. [400, 404]")
		return nil
	}
	var out []int
	for _, item := range n.Content {
		st, err := strconv.Atoi(item.Value)
		if item.Kind != yaml.ScalarNode || err != nil || st < 100 || st > 599 {
			d.errf(item, path, fmt.Sprintf("bad HTTP status %q", item.Value), "use status codes from 100 to 599")
			continue
		}
		out = append(out, st)
	}
	return out
}

// only is mapping n with only the keys given (n itself when it is no
// mapping), so that a decoder of those keys does not see the others.
func only(n *yaml.Node, keys []string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return n
	}
	m := *n
	m.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		for _, k := range keys {
			if n.Content[i].Value == k {
				m.Content = append(m.Content, n.Content[i], n.Content[i+1])
			}
		}
	}
	return &m
}
