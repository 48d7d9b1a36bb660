package report

import (
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/retrylab/retrylab/trace"
)

// AnalysisTable renders an analysis for people: one table per section, with
// n and the Wilson interval beside every rate.
func AnalysisTable(w io.Writer, a *trace.Analysis) error {
	if _, err := fmt.Fprintf(w, "Inputs: %s\n", anInputs(a)); err != nil {
		return err
	}
	for _, s := range analysisSections(a) {
		fmt.Fprintf(w, "\n%s\n", s.title)
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
	return nil
}
