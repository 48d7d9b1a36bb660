// Package results renders a chaos run (chaos.Summary) for people and
// machines: a table for a terminal (Table, TableStyle), GitHub-flavoured
// Markdown, the retrylab.chaos/v1 JSON document and Ant JUnit XML. The HTML
// page of chaos runs is report.PageHTML. Every string from the summary
// (a file anyone could have written) passes through report.RedactLabel and
// report.Visible; a client's ErrorReports through report.CleanReport.
// Renderers only format: they compute nothing that changes a verdict.
package results
