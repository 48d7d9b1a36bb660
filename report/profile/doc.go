// Package profile renders a probe profile (probe.Profile, `chaos probe`'s
// result) for people: a table for a terminal, Markdown, and one
// self-contained HTML page with the exhaustion waits against the fitted
// curve. The table and Markdown print the same rows, read from the profile
// once (view); the JSON document is the profile itself. Renderers only
// format: they decide nothing, and write only to the writer they are given.
package profile
