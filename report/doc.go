// Package report renders retrylab's results for people and machines: trace
// analyses (table, JSON, Markdown, OpenMetrics, HTML: analysis_*.go) and
// their comparison (compare.go), the failures export (failures.go), and the
// one HTML page of analyses and chaos runs (page.go; page_charts.go: the
// analysis's cards and charts; page_timeline.go: each scenario's attempts
// and waits to scale; page_template.go; page_load.go: the run folders it
// reads). The chaos run's text, Markdown, JSON and JUnit renderers are in
// report/results, a probe profile's in report/profile.
//
// Every string from the inputs is made safe to show here, for every
// renderer: RedactLabel removes keys and secrets, Visible escapes control
// and invisible characters, CleanReport does both to a client's
// ErrorReport. Renderers only format: they compute nothing that changes a
// verdict, and they write data only to the writer they are given.
package report
