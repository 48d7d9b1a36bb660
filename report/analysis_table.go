package report

import (
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/retrylab/retrylab/trace/analyze"
)

// AnalysisTable renders an analysis for people: one table per section, with
// n and the Wilson interval beside every rate and durations in human units.
func AnalysisTable(w io.Writer, a *analyze.Analysis) error {
	a = safeAnalysis(a, true) // keys redacted, labels made safe to print
	if _, err := fmt.Fprintf(w, "Inputs: %s\n", anInputs(a)); err != nil {
		return err
	}
	for _, s := range analysisSections(a) {
		fmt.Fprintf(w, "\n%s\n", s.title)
		if s.summary != "" {
			fmt.Fprintf(w, "%s\n", s.summary)
		}
		if len(s.rows) > 0 {
			t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithHeaderAlignment(tw.AlignLeft))
			t.Header(s.header)
			for _, r := range s.rows {
				if err := t.Append(r); err != nil {
					return err
				}
			}
			if err := t.Render(); err != nil {
				return err
			}
		}
		if s.note != "" {
			if _, err := fmt.Fprintf(w, "%s\n", s.note); err != nil {
				return err
			}
		}
	}
	return nil
}
