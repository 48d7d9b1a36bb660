package mock

import (
	"net/url"
	"strings"

	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// readRequest reads a request in the wire format that answers it
// (wire.Format.Read) and whether it offers tools, bounded for the journal:
// the model at 200 bytes, the prompt an excerpt of valid UTF-8
// (maxPromptExcerpt). Secrets are redacted by the caller.
func readRequest(f wire.Format, u *url.URL, body []byte) wire.Request {
	return forJournal(readWhole(f, u, body))
}

// readWhole is readRequest with the prompt whole, as attemptsMatch.prompt
// reads it: the text it looks for may be past an excerpt's cut.
func readWhole(f wire.Format, u *url.URL, body []byte) wire.Request {
	if u == nil {
		u = &url.URL{}
	}
	r := f.Read(u, body)
	r.Tools = wire.OffersTools(body)
	if len(r.Model) > 200 {
		r.Model = r.Model[:200]
	}
	return r
}

// forJournal bounds a request read whole for the journal: its prompt an
// excerpt of valid UTF-8.
func forJournal(r wire.Request) wire.Request {
	r.Prompt = scenario.Excerpt(strings.ToValidUTF8(r.Prompt, "\uFFFD"), maxPromptExcerpt)
	return r
}

// maxPromptExcerpt bounds ServerAttempt.Prompt, in bytes: a longer prompt
// keeps its first and last maxPromptExcerpt/2 bytes (cut at rune
// boundaries) around " … ", so both an error context at its start and the
// original request at its end stay visible.
const maxPromptExcerpt = 2048
