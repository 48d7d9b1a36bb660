package chaos

import (
	"context"
	"fmt"
	"testing"

	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// TestBuiltinCutStreams loads scenarios with the truncate and malformed
// faults and runs them through the mock against the built-in client, in
// every wire format: a truncated answer is a transient stream failure
// (retried, then the ok answer), a malformed one a permanent one (seed 000).
func TestBuiltinCutStreams(t *testing.T) {
	toxi := runnerToxi(t)
	var scs []*scenario.Scenario
	for _, name := range wire.Names() {
		scs = append(scs, parse(t, name+"-truncate", fmt.Sprintf(`
provider: %s
client: {policy: forgeflare}
timeScale: 0.01
attempts:
  - truncate: {afterEvents: 3}
  - truncate: {afterEvents: 1000}
expect:
  outcome: success
  attempts: 3
  failureTypes: [stream_interrupted, stream_interrupted]
`, name)), parse(t, name+"-malformed", fmt.Sprintf(`
provider: %s
client: {policy: forgeflare}
timeScale: 0.01
attempts:
  - malformed: {afterEvents: 3}
expect:
  outcome: failure
  attempts: 1
  failureTypes: [stream_parse]
`, name)))
	}
	r := &Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), Seed: 7, Shard: "1/1"}
	sum, err := r.Run(context.Background(), scs)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range sum.Scenarios {
		if res.Error != "" || !notFailed(res) {
			t.Errorf("%s: error %q, failed checks %v:%s", res.File, res.Error, failedNames(res), describeFailed(res, nil))
		}
	}
	if len(sum.Scenarios) != len(scs) {
		t.Errorf("%d results for %d scenarios", len(sum.Scenarios), len(scs))
	}
}
