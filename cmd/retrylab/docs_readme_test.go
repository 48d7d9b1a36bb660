package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeFirstLines: the README opens with the two commands a newcomer
// runs, in a sh block, before anything else.
func TestReadmeFirstLines(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	want := []string{"# retrylab", "", "```sh", "go run ./cmd/retrylab chaos run", "go test ./...", "```"}
	if len(lines) < len(want) {
		t.Fatalf("README.md has %d lines", len(lines))
	}
	for i, w := range want {
		got := lines[i]
		if i == 3 || i == 4 {
			got, _, _ = strings.Cut(got, " #") // the comment beside each command
			got = strings.TrimSpace(got)
		}
		if got != w {
			t.Errorf("README.md line %d = %q, want %q", i+1, lines[i], w)
		}
	}
}

// mdLink is a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks: every relative link of README.md and docs/*.md reaches a
// file of the repository (the README links its details there).
func TestDocLinks(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, "../../README.md") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
				t.Errorf("%s: link %s: %v", strings.TrimPrefix(f, "../../"), m[1], err)
			}
		}
	}
}
