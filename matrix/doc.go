// Package matrix is the retry matrix (`retrylab matrix`): the manifest of
// the clients to probe (manifest.go), the cells of one client's row read
// from its probe profile (cells.go), the drift between two matrices and
// the rules that gate on it (drift.go, rules.go), and the renderers of
// matrix.md and index.html (markdown.go, html.go).
//
// It is pure: it reads and writes bytes and values, never runs a client
// nor reads the clock; cmd/retrylab/matrix.go runs the probes (probe/battery)
// and hands their profiles here. It imports probe, chaos/scenario (the
// client.env and client.home rules) and internal/yamldiag only
// (layers_test.go).
package matrix
