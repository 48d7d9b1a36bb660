// Package preset holds retrylab's named retry policies: the seeds'
// (forgeflare, plandex, orchestrator, escalation-epic, forge-ticket), the
// official SDKs' (anthropic-*, openai-*, gemini-sdk), and the agents'
// (claude-code, codex-cli, gemini-cli, vercel-ai-sdk, langchain-js).
//
// Each preset is a constructor returning a fresh *retry.Policy, so a caller
// may change what it gets. Its doc comment lists its numbers, its sources
// (each SDK preset one version read from its source) and the choices made
// where a seed is silent. Get finds a preset by name and rejects an unknown
// name with the list of known ones (Names, in a fixed order); a policy file
// names one with `preset:` (retry/policyfile).
package preset
