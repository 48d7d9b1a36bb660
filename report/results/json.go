package results

import (
	"encoding/json"
	"io"

	"github.com/retrylab/retrylab/chaos"
)

// JSON renders a chaos run as the retrylab.chaos/v1 document of
// DESIGN.md (the same document as summary.json).
func JSON(w io.Writer, s *chaos.Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}
