package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// yamlBlocks returns the ```yaml fenced blocks of a Markdown file.
func yamlBlocks(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, part := range strings.Split(string(data), "```yaml\n")[1:] {
		end := strings.Index(part, "```")
		if end < 0 {
			t.Fatalf("%s: a ```yaml block is not closed", path)
		}
		blocks = append(blocks, part[:end])
	}
	return blocks
}

// workflow is the part of GitHub's workflow syntax the example uses;
// decoded with KnownFields, a misspelt key fails the test.
type workflow struct {
	Name        string            `yaml:"name"`
	On          map[string]any    `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Jobs        map[string]struct {
		Name     string `yaml:"name"`
		Needs    any    `yaml:"needs"`
		If       string `yaml:"if"`
		RunsOn   string `yaml:"runs-on"`
		Strategy struct {
			FailFast *bool `yaml:"fail-fast"`
			Matrix   struct {
				Shard []int `yaml:"shard"`
			} `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			Name string            `yaml:"name"`
			ID   string            `yaml:"id"`
			If   string            `yaml:"if"`
			Env  map[string]string `yaml:"env"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// TestCIWorkflowDoc: the GitHub Actions example in docs/ci.md is valid
// YAML, has the jobs it describes, and uses only flags the commands have;
// README.md points to it, and any workflow README.md carries is the same.
func TestCIWorkflowDoc(t *testing.T) {
	docs := yamlBlocks(t, "../../docs/ci.md")
	if len(docs) != 1 {
		t.Fatalf("docs/ci.md has %d yaml blocks, want 1", len(docs))
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(docs/ci.md)") {
		t.Error("README.md does not link docs/ci.md, where the workflow is")
	}
	for _, b := range yamlBlocks(t, "../../README.md") {
		if strings.Contains(b, "jobs:") && b != docs[0] {
			t.Error("README.md carries a workflow that is not docs/ci.md's as it is")
		}
	}
	var wf workflow
	dec := yaml.NewDecoder(strings.NewReader(docs[0]))
	dec.KnownFields(true)
	if err := dec.Decode(&wf); err != nil {
		t.Fatalf("docs/ci.md workflow: %v", err)
	}
	if _, ok := wf.On["pull_request"]; !ok {
		t.Error("the workflow does not run on pull requests")
	}
	chaos, ok := wf.Jobs["chaos"]
	if !ok || len(chaos.Strategy.Matrix.Shard) < 2 {
		t.Fatal("no chaos job with a shard matrix")
	}
	rep, ok := wf.Jobs["report"]
	if !ok || rep.Needs != "chaos" {
		t.Fatal("no report job after chaos")
	}
	var all strings.Builder
	for name, j := range wf.Jobs {
		if j.RunsOn == "" {
			t.Errorf("job %s: no runs-on", name)
		}
		for i, s := range j.Steps {
			if (s.Uses == "") == (s.Run == "") {
				t.Errorf("job %s step %d: want exactly one of uses and run", name, i+1)
			}
			all.WriteString(s.Run + "\n" + s.Uses + "\n")
			for k, v := range s.With {
				all.WriteString(k + ": " + v + "\n")
			}
		}
	}
	text := all.String()
	for _, want := range []string{
		"retrylab chaos run --shard ${{ matrix.shard }}/4", "actions/upload-artifact", "actions/download-artifact",
		"retrylab report html runs -o report.html", "report.html", "junit.xml", "retrylab trace compare main-runs runs",
		"run-id: ${{ steps.base.outputs.run-id }}",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the workflow lacks %q", want)
		}
	}
	// Every flag given to chaos run and trace compare exists.
	flagRE := regexp.MustCompile(`--[a-z-]+`)
	for _, cmd := range [][]string{{"chaos", "run"}, {"trace", "compare"}} {
		var help bytes.Buffer
		if err := run(context.Background(), append(cmd, "--help"), &help, &help); err != errHelp {
			t.Fatalf("%v --help: %v", cmd, err)
		}
		for _, line := range strings.Split(text, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "retrylab "+strings.Join(cmd, " ")) {
				continue
			}
			for _, f := range flagRE.FindAllString(line, -1) {
				if !strings.Contains(help.String(), f+" ") {
					t.Errorf("%q: retrylab %s has no flag %s", line, strings.Join(cmd, " "), f)
				}
			}
		}
	}
}
