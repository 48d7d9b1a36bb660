package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/retrylab/retrylab/trace"
)

// AnalysisMarkdown renders an analysis as GitHub-flavoured Markdown, for a
// CI job summary or a pull-request comment.
func AnalysisMarkdown(w io.Writer, a *trace.Analysis) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "## Retry analysis\n\n%s\n", anInputs(a))
	for _, s := range analysisSections(a) {
		fmt.Fprintf(bw, "\n### %s\n\n", s.title)
		writeMDRow(bw, s.header)
		seps := make([]string, len(s.header))
		for i := range seps {
			seps[i] = "---"
		}
		writeMDRow(bw, seps)
		for _, r := range s.rows {
			writeMDRow(bw, r)
		}
	}
	return bw.Flush()
}

func writeMDRow(w io.Writer, cells []string) {
	esc := make([]string, len(cells))
	for i, c := range cells {
		esc[i] = strings.ReplaceAll(strings.ReplaceAll(c, "|", `\|`), "\n", " ")
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(esc, " | "))
}
