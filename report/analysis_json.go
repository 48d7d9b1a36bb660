package report

import (
	"encoding/json"
	"io"

	"github.com/retrylab/retrylab/trace/analyze"
)

// AnalysisJSON writes the analysis contract (schema retrylab.analysis/v1),
// indented, followed by a newline.
func AnalysisJSON(w io.Writer, a *analyze.Analysis) error {
	a = safeAnalysis(a, false) // keys redacted, labels made safe to print
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(a)
}
