// Package chaos runs scenario files against a mock Anthropic/OpenAI streaming
// server placed behind Toxiproxy and verifies, from the client's trace and from
// the server's own journal, that the client retried exactly as its policy says.
package chaos
