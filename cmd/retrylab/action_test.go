package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The GitHub Action (action.yml, docs/github-action.md) as the runner
// reads it: the keys a composite action needs.
type action struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Inputs      map[string]struct {
		Description string  `yaml:"description"`
		Required    *bool   `yaml:"required"`
		Default     *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	Name  string            `yaml:"name"`
	ID    string            `yaml:"id"`
	Shell string            `yaml:"shell"`
	Run   string            `yaml:"run"`
	Uses  string            `yaml:"uses"`
	Env   map[string]string `yaml:"env"`
}

var exprRef = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

func loadAction(t *testing.T) action {
	t.Helper()
	b, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a action
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a
}

// TestActionSyntax: action.yml is a composite action with the inputs and
// outputs docs/github-action.md names, every run step says its shell (a
// composite action must), every ${{ inputs.X }} and ${{ steps.ID.outputs.Y }}
// names an input or an earlier step, and inputs reach scripts only through
// env (no expression inside a script: no injection through an input).
func TestActionSyntax(t *testing.T) {
	a := loadAction(t)
	if a.Name == "" || a.Description == "" {
		t.Error("action.yml: name and description are required")
	}
	if a.Runs.Using != "composite" {
		t.Errorf("runs.using = %q, want composite (no container)", a.Runs.Using)
	}
	for _, in := range []string{"path", "version", "binary", "args", "junit", "release-url"} {
		if _, ok := a.Inputs[in]; !ok {
			t.Errorf("input %s missing", in)
		} else if a.Inputs[in].Description == "" {
			t.Errorf("input %s: no description", in)
		}
	}
	for _, out := range []string{"junit", "verdict"} {
		if o, ok := a.Outputs[out]; !ok || o.Value == "" {
			t.Errorf("output %s missing or without a value", out)
		}
	}
	ids := map[string]bool{}
	check := func(where, s string, refs map[string]bool) {
		for _, m := range exprRef.FindAllStringSubmatch(s, -1) {
			e := m[1]
			switch {
			case strings.HasPrefix(e, "inputs."):
				if _, ok := a.Inputs[strings.TrimPrefix(e, "inputs.")]; !ok {
					t.Errorf("%s: ${{ %s }}: no such input", where, e)
				}
			case strings.HasPrefix(e, "steps."):
				id, _, _ := strings.Cut(strings.TrimPrefix(e, "steps."), ".")
				if !refs[id] {
					t.Errorf("%s: ${{ %s }}: no step %q before it", where, e, id)
				}
			default:
				t.Errorf("%s: ${{ %s }}: only inputs and steps are used", where, e)
			}
		}
	}
	if len(a.Runs.Steps) == 0 {
		t.Fatal("runs.steps is empty")
	}
	for i, s := range a.Runs.Steps {
		where := "step " + s.Name
		if s.Run == "" && s.Uses == "" {
			t.Errorf("step %d: neither run nor uses", i+1)
		}
		if s.Run != "" && s.Shell == "" {
			t.Errorf("%s: a composite run step needs shell", where)
		}
		if exprRef.MatchString(s.Run) {
			t.Errorf("%s: an expression inside run (pass it through env)", where)
		}
		for k, v := range s.Env {
			check(where+" env "+k, v, ids)
		}
		if s.ID != "" {
			ids[s.ID] = true
		}
	}
	for name, o := range a.Outputs {
		check("output "+name, o.Value, ids)
	}
}

// TestActionWorkflowExample: the example workflow of docs/github-action.md
// parses, has the keys a workflow needs, and passes the action only inputs
// it has.
func TestActionWorkflowExample(t *testing.T) {
	a := loadAction(t)
	b, err := os.ReadFile("../../docs/examples/github-workflow.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Name string         `yaml:"name"`
		On   map[string]any `yaml:"on"`
		Jobs map[string]struct {
			RunsOn string `yaml:"runs-on"`
			Steps  []struct {
				ID   string            `yaml:"id"`
				Uses string            `yaml:"uses"`
				Run  string            `yaml:"run"`
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("docs/examples/github-workflow.yml: %v", err)
	}
	if wf.Name == "" || len(wf.On) == 0 || len(wf.Jobs) == 0 {
		t.Fatalf("the example workflow needs name, on and jobs: %+v", wf)
	}
	used := false
	for name, j := range wf.Jobs {
		if j.RunsOn == "" || len(j.Steps) == 0 {
			t.Errorf("job %s: runs-on and steps are required", name)
		}
		for _, s := range j.Steps {
			if s.Uses == "" && s.Run == "" {
				t.Errorf("job %s: a step with neither uses nor run", name)
			}
			if !strings.HasPrefix(s.Uses, "retrylab/retrylab@") {
				continue
			}
			used = true
			for k := range s.With {
				if _, ok := a.Inputs[k]; !ok {
					t.Errorf("job %s: with.%s: the action has no such input", name, k)
				}
			}
		}
	}
	if !used {
		t.Error("the example workflow does not use retrylab/retrylab@...")
	}
}

// TestActionRun runs the action's own scripts as the runner would (bash,
// inputs through env, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files), with
// the input binary set to this test's retrylab: a passing scenario gives
// exit 0, a Markdown summary and the JUnit output; a failing one exit 1
// and verdict=fail.
func TestActionRun(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the action's scripts are run by bash; this test runs them on unix")
	}
	bin, err := exec.LookPath("retrylab")
	if err != nil {
		t.Fatalf("the retrylab test command is not installed: %v", err)
	}
	a := loadAction(t)
	for _, tc := range []struct {
		name, scenario string
		code           int
		verdict        string
		summary        string
	}{
		{"pass", "client: {policy: forgeflare}\ntimeScale: 0.01\nattempts: [{status: 529}]\nexpect: {outcome: success, attempts: 2}\n", 0, "pass", "1 passed, 0 failed"},
		{"fail", "client: {policy: forgeflare}\ntimeScale: 0.01\nattempts: [{status: 529}]\nexpect: {outcome: success, attempts: 5}\n", 1, "fail", "0 passed, 1 failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "chaos"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "chaos", "s.yaml"), []byte(tc.scenario), 0o644); err != nil {
				t.Fatal(err)
			}
			inputs := map[string]string{"binary": bin, "path": "chaos", "junit": "out/junit.xml", "args": "--out runs --confirm 0"}
			for k, in := range a.Inputs {
				if _, ok := inputs[k]; !ok && in.Default != nil {
					inputs[k] = *in.Default
				}
			}
			outputs := map[string]map[string]string{}
			summary := filepath.Join(dir, "summary.md")
			code := 0
			for _, s := range a.Runs.Steps {
				outFile := filepath.Join(dir, "output-"+s.ID)
				// As the runner runs shell: bash (bash --noprofile --norc -eo pipefail).
				cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", s.Run)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GITHUB_OUTPUT="+outFile, "GITHUB_STEP_SUMMARY="+summary, "RUNNER_TEMP="+dir)
				for k, v := range s.Env {
					v = exprRef.ReplaceAllStringFunc(v, func(m string) string {
						e := exprRef.FindStringSubmatch(m)[1]
						if in, ok := strings.CutPrefix(e, "inputs."); ok {
							return inputs[in]
						}
						p := strings.Split(e, ".") // steps.ID.outputs.NAME
						return outputs[p[1]][p[3]]
					})
					cmd.Env = append(cmd.Env, k+"="+v)
				}
				out, err := cmd.CombinedOutput()
				if s.ID == "install" && err != nil {
					t.Fatalf("install step: %v\n%s", err, out)
				}
				if err != nil {
					code = cmd.ProcessState.ExitCode()
					t.Logf("step %s: exit %d:\n%s", s.ID, code, out)
				}
				outputs[s.ID] = readOutputs(t, outFile)
				if code != 0 {
					break
				}
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if got := outputs["run"]["verdict"]; got != tc.verdict {
				t.Errorf("verdict output %q, want %q", got, tc.verdict)
			}
			if got := outputs["run"]["junit"]; got != "out/junit.xml" {
				t.Errorf("junit output %q", got)
			}
			if _, err := os.Stat(filepath.Join(dir, "out", "junit.xml")); err != nil {
				t.Errorf("no JUnit file: %v", err)
			}
			md, _ := os.ReadFile(summary)
			if !strings.Contains(string(md), "## Chaos run: "+tc.summary) {
				t.Errorf("job summary:\n%s", md)
			}
		})
	}
}

func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m
}
