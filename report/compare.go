package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/retrylab/retrylab/trace/analyze"
)

// CompareJSON writes a comparison (schema retrylab.compare/v1), indented.
func CompareJSON(w io.Writer, c *analyze.Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// compareCells are a row's cells, shared by the table and Markdown.
func compareCells(r analyze.CompareRow) []string {
	p := "-"
	if r.P != nil {
		p = strconv.FormatFloat(*r.P, 'g', 3, 64)
	}
	name := r.Metric
	if r.Kind == "distribution" {
		name += " (mean)"
	}
	return []string{name, cmpNum(r.Base, r.Kind), cmpNum(r.Current, r.Kind), cmpDelta(r),
		fmt.Sprintf("%d / %d", r.BaseN, r.CurrentN), p}
}

// compareHeader: a distribution row (delay_ms, duration_ms) shows the mean.
var compareHeader = []string{"metric", "base", "current", "delta", "n base / current", "p"}

func cmpNum(f float64, kind string) string {
	switch kind {
	case "rate":
		return strconv.FormatFloat(100*f, 'f', 2, 64) + "%"
	case "distribution": // a mean, in ms
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func cmpDelta(r analyze.CompareRow) string {
	if r.Kind == "rate" {
		return fmt.Sprintf("%+.2f pp", 100*r.Delta)
	}
	if r.Kind == "distribution" {
		return fmt.Sprintf("%+.1f", r.Delta)
	}
	return strconv.FormatFloat(r.Delta, 'f', -1, 64)
}

func compareSide(s analyze.CompareSide) string {
	return fmt.Sprintf("%s: %d files, %d runs, %d requests", s.From, s.Files, s.Runs, s.Requests)
}

func compareVerdict(c *analyze.Comparison) string {
	if c.Regressions > 0 {
		return fmt.Sprintf("REGRESSION: %d metric(s) regressed (alpha %g, minimum %d samples each side)", c.Regressions, c.Alpha, c.MinSamples)
	}
	return fmt.Sprintf("no regression (alpha %g, minimum %d samples each side)", c.Alpha, c.MinSamples)
}

// CompareTable renders a comparison for people.
func CompareTable(w io.Writer, c *analyze.Comparison) error {
	fmt.Fprintf(w, "Base:    %s\nCurrent: %s\n\n", compareSide(c.Base), compareSide(c.Current))
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithHeaderAlignment(tw.AlignLeft))
	t.Header(append(compareHeader, "verdict"))
	for _, r := range c.Rows {
		if err := t.Append(append(compareCells(r), r.Verdict)); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, r := range c.Rows {
		if r.Verdict == analyze.VerdictRegression || r.Verdict == analyze.VerdictImproved || r.MaxIncrease != nil {
			fmt.Fprintf(w, "%s: %s\n", r.Metric, r.Reason)
		}
	}
	_, err := fmt.Fprintf(w, "%s\n", compareVerdict(c))
	return err
}

// mdVerdict is a verdict with an icon and a word (readable without the icon).
func mdVerdict(v string) string {
	switch v {
	case analyze.VerdictRegression:
		return "❌ regression"
	case analyze.VerdictOK:
		return "✅ ok"
	case analyze.VerdictImproved:
		return "✅ improved"
	case analyze.VerdictTooFew:
		return "➖ too few samples"
	}
	return "➖ not tested"
}

// CompareMarkdown renders a comparison as GitHub-flavoured Markdown; the
// reasons of regressions are in a <details> block.
func CompareMarkdown(w io.Writer, c *analyze.Comparison) error {
	bw := bufio.NewWriter(w)
	icon := "✅"
	if c.Regressions > 0 {
		icon = "❌"
	}
	fmt.Fprintf(bw, "## Retry comparison\n\n%s %s\n\n", icon, mdText(compareVerdict(c)))
	fmt.Fprintf(bw, "- Base: %s\n- Current: %s\n\n", mdText(compareSide(c.Base)), mdText(compareSide(c.Current)))
	writeMDRow(bw, append(compareHeader, "verdict"))
	seps := make([]string, len(compareHeader)+1)
	for i := range seps {
		seps[i] = "---"
	}
	writeMDRow(bw, seps)
	for _, r := range c.Rows {
		writeMDRow(bw, append(compareCells(r), mdVerdict(r.Verdict)))
	}
	if c.Regressions > 0 {
		fmt.Fprintf(bw, "\n<details open><summary>❌ %d regression(s)</summary>\n\n", c.Regressions)
		for _, r := range c.Rows {
			if r.Verdict == analyze.VerdictRegression {
				fmt.Fprintf(bw, "- **%s**: %s\n", mdText(r.Metric), mdText(r.Reason))
			}
		}
		bw.WriteString("\n</details>\n")
	}
	return bw.Flush()
}
