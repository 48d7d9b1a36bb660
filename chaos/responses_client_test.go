package chaos

import (
	"context"
	"fmt"
	"testing"

	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// TestBuiltinEveryFormat runs the built-in client through every fault a
// stream can meet, in every wire format the mock speaks: each format has a
// provider client (a new format without one fails here), and its failures
// classify alike. Waits are not checked (timeScale 0.01 keeps them short).
func TestBuiltinEveryFormat(t *testing.T) {
	toxi := runnerToxi(t)
	var scs []*scenario.Scenario
	for _, name := range wire.Names() {
		scs = append(scs, parse(t, name, fmt.Sprintf(`
provider: %s
client: {policy: forgeflare}
timeScale: 0.01
attempts:
  - status: 503
  - sseError: {afterEvents: 3, type: overloaded_error}
  - drop: {afterEvents: 2}
  - reset: {}
expect:
  outcome: success
  attempts: 5
  failureTypes: [overloaded, overloaded, stream_interrupted, connection_error]
`, name)))
	}
	r := &Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), Seed: 7, Shard: "1/1"}
	sum, err := r.Run(context.Background(), scs)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range sum.Scenarios {
		if !notFailed(res) {
			t.Errorf("format %s: failed checks %v: %+v", res.Name, failedNames(res), res)
		}
	}
	if len(sum.Scenarios) != len(wire.Names()) {
		t.Errorf("%d results for %d formats", len(sum.Scenarios), len(wire.Names()))
	}
}
