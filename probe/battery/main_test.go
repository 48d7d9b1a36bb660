package battery_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/preset"
	"github.com/retrylab/retrylab/retry/provider"
)

// TestMain lets this test binary be the supervisor of the clients it
// probes (client.MaybeSupervise, first thing, as in retrylab's main) and
// a client itself: with RETRYLAB_TEST_PRESET set it is the built-in client
// with that preset (presetClient), which the survival test probes.
func TestMain(m *testing.M) {
	client.MaybeSupervise()
	if name := os.Getenv("RETRYLAB_TEST_PRESET"); name != "" {
		os.Exit(presetClient(name))
	}
	os.Exit(m.Run())
}

// presetClient is the built-in client (the retry core and the provider
// client) with the named preset, as an external client of chaos: the
// environment chaos gives a client says where the mock is, which wire
// format, model and time scale, and how many requests to make. It exits
// 0 when every request succeeded, 1 when one failed, 2 on a bad setup.
func presetClient(name string) int {
	pol, err := preset.Get(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	prov, model := os.Getenv("RETRYLAB_PROVIDER"), os.Getenv("RETRYLAB_MODEL")
	c, err := provider.New(prov, provider.Config{BaseURL: os.Getenv("RETRYLAB_BASE_URL"), APIKey: "sk-retrylab-test-0000"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	scale, _ := strconv.ParseFloat(os.Getenv("RETRYLAB_TIME_SCALE"), 64)
	n, _ := strconv.Atoi(os.Getenv("RETRYLAB_REQUESTS"))
	rt := &retry.Retrier{Policy: pol, Provider: prov, Model: model, TimeScale: scale, Log: os.Stderr}
	code := 0
	for i := 0; i < max(n, 1); i++ {
		_, err := rt.Run(context.Background(), func(ctx context.Context, a retry.Attempt) (string, error) {
			m := a.Model
			if m == "" {
				m = model
			}
			resp, err := c.Stream(ctx, provider.Request{Model: m, Messages: []provider.Message{{Role: "user", Content: "Say hello."}}, MaxTokens: 64})
			if err != nil {
				return "", err
			}
			return resp.Text, nil
		})
		if err != nil {
			fmt.Fprintf(os.Stderr, "request %d failed: %v\n", i+1, err)
			code = 1
		}
	}
	return code
}
