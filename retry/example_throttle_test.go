package retry_test

import (
	"fmt"
	"time"

	"github.com/retrylab/retrylab/retry"
)

// A Throttle rejects a request locally with probability
// max(0, (requests − K·accepts) / (requests + 1)) over its window: nothing
// while the provider accepts at least half, most of them while it refuses
// everything. Give it to a Retrier (Retrier.Throttle), or write
// adaptiveThrottling: {k: 2, window: 2m} in a policy file.
func ExampleNewThrottle() {
	clock := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	th := retry.NewThrottle(retry.DefaultThrottleK, retry.DefaultThrottleWindow, func() time.Time { return clock })
	for range 10 {
		th.Record(true)
	}
	fmt.Printf("all accepted: %.2f\n", th.Probability())
	for range 30 {
		th.Record(false) // 429, 529, 503
	}
	fmt.Printf("10 of 40 accepted: %.2f\n", th.Probability())
	clock = clock.Add(3 * time.Minute) // past the window
	th.Record(false)
	fmt.Printf("a refusal alone, 3 minutes later: %.2f\n", th.Probability())
	// Output:
	// all accepted: 0.00
	// 10 of 40 accepted: 0.49
	// a refusal alone, 3 minutes later: 0.50
}
