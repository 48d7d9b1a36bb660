package wire

import (
	"strings"
	"testing"
)

// TestKeepalive: every format's keepalive is one whole SSE block (an event
// or a comment) that carries no answer: a stream carries it, a JSON answer
// has none. Anthropic's is the ping its stream already holds; the others'
// are comments, which no SSE parser hands on as an event.
func TestKeepalive(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		p := params(name)
		ka := p.Format.Keepalive()
		if !strings.HasSuffix(ka, "\n\n") || strings.Count(ka, "\n\n") != 1 {
			t.Errorf("%s: keepalive %q is not one SSE block", name, ka)
		}
		if s := Stream(p); string(s.Keepalive) != ka {
			t.Errorf("%s: stream's keepalive %q, want %q", name, s.Keepalive, ka)
		}
		p.NonStream = true
		if r := OK(p); r.Keepalive != nil {
			t.Errorf("%s: a JSON answer has keepalive %q", name, r.Keepalive)
		}
		isComment := strings.HasPrefix(ka, ":")
		if inStream := strings.Contains(strings.Join(p.Format.Events(params(name)), ""), ka); !isComment && !inStream {
			t.Errorf("%s: keepalive %q is neither a comment nor an event of the format's own stream", name, ka)
		}
	}
}
