package retry_test

import (
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/policyfile"
	"github.com/retrylab/retrylab/retry/preset"
)

// The internal tests run the loop under the presets and parsed policies;
// see TestPolicies in helpers_test.go.
func init() {
	retry.TestPolicies.Get, retry.TestPolicies.Names, retry.TestPolicies.Parse = preset.Get, preset.Names, policyfile.Parse
}
