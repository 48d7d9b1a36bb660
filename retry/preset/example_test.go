package preset_test

import (
	"fmt"
	"time"

	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/preset"
)

func ExampleGet() {
	p, err := preset.Get("forgeflare")
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Schedule(retry.Overloaded))
	lo, hi, ok := p.Envelope(retry.RateLimit, 1, 5*time.Second, true)
	fmt.Println(lo, hi, ok)
	_, err = preset.Get("aws")
	fmt.Println(err)
	// Output:
	// [2s 4s 8s 16s]
	// 5s 5s true
	// unknown policy preset "aws" (valid: forgeflare, plandex, orchestrator, escalation-epic, forge-ticket, anthropic-sdk, openai-sdk, anthropic-node, anthropic-python, anthropic-python-2, anthropic-go, openai-node, openai-node-7, openai-go, openai-python, gemini-sdk, gemini-cli, claude-code, codex-cli, vercel-ai-sdk, langchain-js, anthropic-java, openai-java, aider)
}
