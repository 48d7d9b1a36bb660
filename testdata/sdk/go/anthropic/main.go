// Command anthropic is the official Anthropic Go SDK
// (github.com/anthropics/anthropic-sdk-go, pinned in ../go.mod), unchanged
// and with its defaults, as a retrylab external client:
// anthropic.NewClient() reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY from
// the environment the harness sets and retries with its own loop
// (internal/requestconfig: 2 retries, 0.5s × 2^n minus up to 25%,
// retry-after-ms / Retry-After, x-should-retry). Each request streams
// (Messages.NewStreaming) and is read to its end. See docs/sdk-clients.md.
package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"retrylab.test/sdkclients/internal/sdkclient"
)

func main() {
	client := anthropic.NewClient(option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		return sdkclient.Timed(req, next)
	}))
	model := sdkclient.Model("claude-haiku-4-5")
	sdkclient.Run("anthropic-go", func(ctx context.Context) (string, error) {
		stream := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
			Model:     anthropic.Model(model),
			MaxTokens: 256,
			Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello."))},
		})
		defer stream.Close()
		var text, stopReason string
		stopped := false
		for stream.Next() {
			switch ev := stream.Current().AsAny().(type) {
			case anthropic.ContentBlockDeltaEvent:
				if d, ok := ev.Delta.AsAny().(anthropic.TextDelta); ok {
					text += d.Text
				}
			case anthropic.MessageDeltaEvent:
				if ev.Delta.StopReason != "" {
					stopReason = string(ev.Delta.StopReason)
				}
			case anthropic.MessageStopEvent:
				stopped = true
			}
		}
		if err := stream.Err(); err != nil {
			return "", err
		}
		if !stopped || stopReason == "" {
			return "", fmt.Errorf("%w (message_stop %v, stop_reason %q) after %d characters", sdkclient.ErrIncomplete, stopped, stopReason, len(text))
		}
		return fmt.Sprintf("%d characters, stop_reason %s", len(text), stopReason), nil
	})
}
