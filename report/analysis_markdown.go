package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/retrylab/retrylab/trace/analyze"
)

// AnalysisMarkdown renders an analysis as GitHub-flavoured Markdown, for a
// CI job summary or a pull-request comment.
func AnalysisMarkdown(w io.Writer, a *analyze.Analysis) error {
	a = safeAnalysis(a, true) // keys redacted, labels made safe to print
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "## Retry analysis\n\n%s\n", mdText(anInputs(a)))
	for _, s := range analysisSections(a) {
		fmt.Fprintf(bw, "\n### %s\n\n", s.title)
		if s.summary != "" {
			fmt.Fprintf(bw, "%s\n", mdText(s.summary))
			if len(s.rows) > 0 {
				bw.WriteString("\n")
			}
		}
		if len(s.rows) > 0 {
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
		if s.note != "" {
			fmt.Fprintf(bw, "\n%s\n", mdText(s.note))
		}
	}
	return bw.Flush()
}

func writeMDRow(w io.Writer, cells []string) {
	esc := make([]string, len(cells))
	for i, c := range cells {
		esc[i] = mdText(c)
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(esc, " | "))
}

// mdText keeps data from breaking a table row, being read as HTML (a model
// named "<script>" shows as written) or as a link ("[x](https://...)"). A
// backslash is escaped too: "\\|" would otherwise leave the pipe unescaped
// for renderers that count backslashes.
func mdText(s string) string { return mdEscaper.Replace(s) }

var mdEscaper = strings.NewReplacer(`\`, `\\`, "|", `\|`, "](", `]\(`, "\n", " ", "\r", " ", "&", "&amp;", "<", "&lt;", ">", "&gt;")
