// Command openai is the official OpenAI Go SDK
// (github.com/openai/openai-go/v3, pinned in ../go.mod), unchanged and with
// its defaults, as a retrylab external client: openai.NewClient() reads
// OPENAI_BASE_URL and OPENAI_API_KEY from the environment the harness sets
// and retries with its own loop (internal/requestconfig: 2 retries, 0.5s ×
// 2^n minus up to 25%, retry-after-ms / Retry-After up to 2 minutes,
// x-should-retry). Each request streams (Chat.Completions.NewStreaming)
// and is read to its end. See docs/sdk-clients.md.
package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"retrylab.test/sdkclients/internal/sdkclient"
)

func main() {
	client := openai.NewClient(option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		return sdkclient.Timed(req, next)
	}))
	model := sdkclient.Model("gpt-4o-mini")
	sdkclient.Run("openai-go", func(ctx context.Context) (string, error) {
		stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:    openai.ChatModel(model),
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")},
		})
		defer stream.Close()
		var text, finish string
		for stream.Next() {
			for _, c := range stream.Current().Choices {
				text += c.Delta.Content
				if c.FinishReason != "" {
					finish = c.FinishReason
				}
			}
		}
		if err := stream.Err(); err != nil {
			return "", err
		}
		if finish == "" {
			return "", fmt.Errorf("%w (no finish_reason) after %d characters", sdkclient.ErrIncomplete, len(text))
		}
		return fmt.Sprintf("%d characters, finish_reason %s", len(text), finish), nil
	})
}
