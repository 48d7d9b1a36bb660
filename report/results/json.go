package report

import (
	"encoding/json"
	"io"

	"github.com/retrylab/retrylab/chaos"
)

// ChaosJSON renders a chaos run as the retrylab.chaos/v1 document of
// DESIGN.md (the same document as summary.json).
func ChaosJSON(w io.Writer, s *chaos.Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}
