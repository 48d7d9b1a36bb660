package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/internal/regfile"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/internal/yamldiag"
)

// isPolicyFileName reports whether a file found in a scenario folder is a
// policy file kept beside the scenarios (NAME.policy.yaml, .yml or .json),
// which a folder walk leaves out; named explicitly, it is read as a scenario.
func isPolicyFileName(path string) bool {
	base := strings.ToLower(filepath.Base(path))
	return strings.HasSuffix(strings.TrimSuffix(base, filepath.Ext(base)), ".policy")
}

// LoadError is one problem found in a scenario file. It names the file, the
// line and column, the field path (e.g. "attempts[2].retryAfter") and says
// what to do next (Hint, which Error leaves out: LoadErrors prints it once).
// It is the YAML diagnostics shared by scenario, policy and alerts files.
type LoadError = yamldiag.Problem

// LoadErrors is every problem found in one or more scenario files, in file
// and line order.
//
// Each hint is printed once: the CLI prints Error() after "error: " and then
// Hint() after "hint: ". With one error, Error() is that error alone and
// Hint() its hint. With several, Error() puts each error's hint on an
// indented "hint:" line under it, and Hint() says what to do about them all.
type LoadErrors []*LoadError

func (es LoadErrors) Error() string { return yamldiag.List(es).Error() }

// Hint is the hint for the CLI's "hint:" line: the error's own hint when
// there is one error, else what to do about several.
func (es LoadErrors) Hint() string {
	return yamldiag.List(es).Hint("fix the errors above; run 'retrylab chaos validate FILE' to check a file without running it")
}

// nodeError is a problem of a value decoded in a form of its own (see
// decodeOwn), at its node.
type nodeError struct {
	node *yaml.Node
	sub  string // appended to the field path, e.g. "[1]"
	msg  string
	hint string
}

// Defaults applied by the loader.
const (
	DefaultProvider       = "anthropic"
	DefaultAnthropicModel = "claude-haiku-4-5"
	DefaultOpenAIModel    = "gpt-4o-mini"
)

// LoadScenario reads and strictly validates one scenario file. Every problem
// is reported, as LoadErrors, with its file, line, field and a hint.
//
// Only a regular file (or a link to one) is read, and at most
// MaxScenarioFileBytes of it: a FIFO, a device or a folder is an error at
// once, never opened in a way that could block.
func LoadScenario(path string) (*Scenario, error) {
	data, err := regfile.ReadFile(path, MaxScenarioFileBytes)
	if err != nil {
		return nil, LoadErrors{readError(path, err)}
	}
	return ParseScenario(path, data)
}

// MaxScenarioFileBytes bounds what LoadScenario reads: a scenario is a
// few dozen lines (ok texts are at most 64 KiB each).
const MaxScenarioFileBytes = 8 << 20

// readError is the LoadError of a scenario file that could not be read.
func readError(path string, err error) *LoadError {
	var nr *regfile.NotRegularError
	var tl *regfile.TooLargeError
	switch {
	case errors.As(err, &nr):
		return &LoadError{File: path, Msg: nr.Problem(),
			Hint: "give the path of a scenario file (YAML or JSON); a FIFO would wait for a writer and a device may never end, so neither is opened"}
	case errors.As(err, &tl):
		return &LoadError{File: path, Msg: fmt.Sprintf("larger than %d bytes: not a scenario file", tl.Limit),
			Hint: "check that the path names a scenario file"}
	}
	msg := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		msg = "cannot read: " + pe.Err.Error()
	}
	return &LoadError{File: path, Msg: msg, Hint: "check the path; scenario files are YAML or JSON"}
}

// ParseScenario parses data as the scenario file path.
func ParseScenario(path string, data []byte) (*Scenario, error) {
	d := &decoder{file: path, c: yamldiag.New(path)}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := yamldiag.Syntax(err)
		return nil, LoadErrors{{File: path, Line: line, Column: 1, Msg: "invalid YAML: " + msg, Hint: "check indentation and quoting; JSON is valid YAML too"}}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, LoadErrors{{File: path, Msg: "empty scenario file", Hint: "a scenario needs at least attempts and expect; see docs/chaos.md"}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "", "start the file with keys such as name:, attempts:, expect:", "a scenario must be a mapping, got %s", kindName(root))
		return nil, LoadErrors(d.c.List())
	}
	sc := &Scenario{File: path, Lines: keyLines(root)}
	d.decode(root, reflect.ValueOf(sc).Elem(), "")
	d.validate(root, sc)
	if errs := d.c.List(); len(errs) > 0 {
		return nil, LoadErrors(errs)
	}
	return sc, nil
}

// LoadPaths loads every scenario named by paths: files, or folders whose
// *.yaml, *.yml and *.json files are loaded in name order. Scenario names
// must be unique (they name run folders). All problems are returned together.
//
// Walking a folder skips run folders (any folder holding summary.json or
// result.json, which chaos run writes) and the folders in skipDirs (e.g.
// chaos run's --out), so that running a folder twice does not load the
// first run's results as scenarios. Files named in paths are always loaded.
func LoadPaths(paths []string, skipDirs ...string) ([]*Scenario, error) {
	var skip []os.FileInfo
	for _, d := range skipDirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			skip = append(skip, fi)
		}
	}
	files, errs := scenarioFiles(paths, skip)
	var out []*Scenario
	seen := map[string]string{}
	for _, f := range files {
		sc, err := LoadScenario(f)
		if err != nil {
			var le LoadErrors
			if errors.As(err, &le) {
				errs = append(errs, le...)
			} else {
				errs = append(errs, &LoadError{File: f, Msg: err.Error()})
			}
			continue
		}
		if prev, ok := seen[sc.Name]; ok {
			errs = append(errs, &LoadError{File: f, Field: "name", Msg: fmt.Sprintf("scenario name %q is also used by %s", sc.Name, prev), Hint: "names must be unique: they name the run folders"})
			continue
		}
		seen[sc.Name] = f
		out = append(out, sc)
	}
	if len(errs) > 0 {
		return out, errs
	}
	return out, nil
}

// scenarioFiles lists the scenario files paths name: each file as it is,
// each folder's scenario files in name order; a path that cannot be read
// and a folder without one are problems.
func scenarioFiles(paths []string, skip []os.FileInfo) ([]string, LoadErrors) {
	const hint = "give scenario files or folders that hold them"
	var files []string
	var errs LoadErrors
	for _, p := range paths {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			errs = append(errs, &LoadError{File: p, Msg: "cannot read: " + strings.TrimPrefix(err.Error(), "stat "+p+": "), Hint: hint})
		case !fi.IsDir():
			files = append(files, p)
		default:
			found, skipped := walkScenarios(p, skip)
			if len(found) == 0 {
				msg := "no scenario files (*.yaml, *.yml, *.json) in this folder"
				if skipped {
					msg += " outside run folders"
				}
				errs = append(errs, &LoadError{File: p, Msg: msg, Hint: hint})
			}
			files = append(files, found...)
		}
	}
	return files, errs
}

// walkScenarios finds the scenario files under dir, in name order: YAML
// and JSON files but policy files, outside run folders and skip. skipped
// says whether a folder was left out.
func walkScenarios(dir string, skip []os.FileInfo) (found []string, skipped bool) {
	_ = filepath.WalkDir(dir, func(f string, de fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case de.IsDir() && skipDir(f, skip):
			skipped = true
			return filepath.SkipDir
		case de.IsDir():
			return nil
		}
		switch strings.ToLower(filepath.Ext(f)) {
		case ".yaml", ".yml", ".json":
			if !isPolicyFileName(f) {
				found = append(found, f)
			}
		}
		return nil
	})
	sort.Strings(found)
	return found, skipped
}

// skipDir reports whether LoadPaths should not walk into the folder dir: it
// is one of skip, or a run folder (it holds summary.json or result.json).
func skipDir(dir string, skip []os.FileInfo) bool {
	for _, name := range []string{"summary.json", "result.json"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	if len(skip) == 0 {
		return false
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return false
	}
	for _, s := range skip {
		if os.SameFile(fi, s) {
			return true
		}
	}
	return false
}

// validate checks what the types alone cannot, resolves client.policy and
// applies defaults.
func (d *decoder) validate(root *yaml.Node, sc *Scenario) {
	top := mapping(root)
	d.validateTop(top, sc)
	client := mapping(top["client"])
	if n, ok := client["policy"]; ok {
		d.resolvePolicy(n, sc)
	}
	d.validateClient(client, sc)
	d.validateErrorContext(client, sc)
	if seq := top["attempts"]; seq != nil && seq.Kind == yaml.SequenceNode {
		for i, fn := range seq.Content {
			if i < len(sc.Attempts) {
				sc.Attempts[i].Line = fn.Line
			}
		}
	}
	d.validateAttemptsMatch(top["attemptsMatch"], sc.AttemptsMatch)
	d.validateOutage(top["outage"], sc.Outage)
	d.validateLimits(top["limits"], sc.Limits)
	d.validateFleet(top, sc) // fleet.go
	d.validateExpect(mapping(top["expect"]), sc)
}

// validateAttemptsMatch checks attemptsMatch: at least one field; path and
// model valid path.Match patterns; a path without wildcards one that a wire
// format answers.
func (d *decoder) validateAttemptsMatch(n *yaml.Node, m *AttemptsMatch) {
	if n == nil || m == nil || n.Kind != yaml.MappingNode {
		return
	}
	fields := mapping(n)
	if m.Path == "" && m.Model == "" && m.Stream == nil && m.Prompt == "" && m.Tools == nil {
		d.c.Add(n, "attemptsMatch", "attemptsMatch matches nothing in particular", "give path, model, stream, prompt or tools (e.g. {path: /v1/responses, stream: true}), or remove it")
	}
	for _, f := range []struct{ key, pattern string }{{"path", m.Path}, {"model", m.Model}} {
		if _, err := path.Match(f.pattern, ""); err != nil {
			d.errorf(fields[f.key], "attemptsMatch."+f.key, "a pattern matches literally, with * ? and [a-z] as in path.Match", "bad pattern %q", f.pattern)
		}
	}
	switch {
	case m.Path == "":
	case !strings.HasPrefix(m.Path, "/"):
		d.errorf(fields["path"], "attemptsMatch.path", "write the request path, e.g. /v1/responses", "path %q does not start with /", m.Path)
	case !strings.ContainsAny(m.Path, `*?[\`):
		if _, _, ok := wire.Recognize(http.MethodPost, m.Path); !ok {
			hint := "attempts are requests a wire format answers: " + wire.Routes()
			if s := closest(m.Path, strings.Split(strings.ReplaceAll(wire.Routes(), "POST ", ""), ", ")); s != "" {
				hint = "did you mean " + s + "?"
			}
			d.errorf(fields["path"], "attemptsMatch.path", hint, "no wire format answers POST %s", m.Path)
		}
	}
}

// validateTop checks name, provider and timeScale, and fills in the
// defaults of the top-level keys.
func (d *decoder) validateTop(top map[string]*yaml.Node, sc *Scenario) {
	if sc.Name == "" {
		base := filepath.Base(d.file)
		sc.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	if why := checkName(sc.Name); why != "" {
		d.c.Add(top["name"], "name", why, nameHint(sc.Name, top["name"] != nil))
	}
	if _, err := wire.Lookup(sc.Provider); sc.Provider != "" && err != nil {
		d.errorf(top["provider"], "provider", "providers: "+strings.Join(wire.Names(), ", "), "unknown provider %q", sc.Provider)
	}
	if n, ok := top["timeScale"]; ok && isZero(n) {
		d.errorf(n, "timeScale", "0.1 makes every wait ten times shorter", "timeScale must be above 0")
	} else if why := CheckTimeScale(sc.TimeScale); ok && sc.TimeScale != 0 && why != "" {
		d.errorf(n, "timeScale", TimeScaleHint, "timeScale %s", why)
	}
	applyDefaults(sc)
}

// nameHint says how to fix a bad scenario name; written says whether the
// file has a name: key (else the name is the file's).
func nameHint(name string, written bool) string {
	hint := "use letters, digits and dashes"
	if len(name) > MaxNameLen {
		hint = fmt.Sprintf("shorten it to %d bytes at most (it names the run folder); say more in description", MaxNameLen)
	}
	if !written {
		hint += "; the name comes from the file name: rename the file or add name:"
	}
	return hint
}

// applyDefaults fills in what a scenario leaves out: the provider, its
// model, one request, a time scale of 1.
func applyDefaults(sc *Scenario) {
	if sc.Provider == "" {
		sc.Provider = DefaultProvider
	}
	if f, err := wire.Lookup(sc.Provider); sc.Model == "" && err == nil {
		sc.Model = f.DefaultModel()
	}
	if sc.Requests == 0 {
		sc.Requests = 1
	}
	if sc.TimeScale == 0 {
		sc.TimeScale = 1
	}
}

// validateClient checks client.operation, client.requires and
// client.command against each other.
func (d *decoder) validateClient(client map[string]*yaml.Node, sc *Scenario) {
	c := &sc.Client
	if n, ok := client["operation"]; ok && !Contains(Operations, c.Operation) && n.Kind == yaml.ScalarNode {
		hint := "operation is safe, conditional or irreversible"
		if s := closest(c.Operation, Operations); s != "" {
			hint = "did you mean " + s + "?"
		}
		d.errorf(n, "client.operation", hint, "unknown operation %q", c.Operation)
	}
	if c.Operation != "" && len(c.Command) > 0 {
		d.c.Add(client["operation"], "client.operation", "operation applies to the built-in client only", "an external client (client.command) decides for itself what it retries; remove operation")
	}
	if n, ok := client["command"]; ok && len(c.Command) == 0 && n.Kind == yaml.SequenceNode {
		d.c.Add(n, "client.command", "empty command", `write the program and its arguments: ["python3", "agent.py"]`)
	}
	d.validateRequires(client["requires"], c)
	d.validateEnv(client["env"], c)
	d.validateInheritEnv(client["inheritEnv"], c)
	d.validateHome(client["home"], c)
}

// validateInheritEnv checks client.inheritEnv (node n, nil when absent): an
// external client's, each entry the name of a variable the harness does
// not set itself, given once, and not also in client.env.
func (d *decoder) validateInheritEnv(n *yaml.Node, c *Client) {
	if n == nil {
		return
	}
	if len(c.Command) == 0 {
		d.c.Add(n, "client.inheritEnv", "inheritEnv applies to an external client only", "add client.command, or remove inheritEnv")
	}
	if n.Kind != yaml.SequenceNode {
		return
	}
	seen := map[string]bool{}
	for i, name := range c.InheritEnv {
		if i >= len(n.Content) {
			break
		}
		at, field := n.Content[i], fmt.Sprintf("client.inheritEnv[%d]", i)
		_, inEnv := c.Env[name]
		switch problem, hint := InheritEnvProblem(name); {
		case problem != "":
			d.c.Add(at, field, problem, hint)
		case seen[name]:
			d.c.Add(at, field, name+" is listed twice", "remove one of them")
		case inEnv:
			d.c.Add(at, field, "client.env sets "+name+" too",
				"keep one: client.env for a value written in the scenario, inheritEnv for the value of retrylab's own environment")
		}
		seen[name] = true
	}
}

// validateHome checks client.home (node n, nil when absent): an external
// client's, each key a path inside its HOME.
func (d *decoder) validateHome(n *yaml.Node, c *Client) {
	if n == nil {
		return
	}
	if len(c.Command) == 0 {
		d.c.Add(n, "client.home", "home applies to an external client only", "add client.command, or remove home")
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	var names []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if problem, hint := HomeFileProblem(k.Value); problem != "" {
			d.c.Add(k, "client.home."+k.Value, problem, hint)
		}
		names = append(names, k.Value)
	}
	if c := homeFilesConflict(names); c != "" {
		d.c.Add(n, "client.home", c, "keep one of them, or name files in different folders")
	}
}

// validateEnv checks client.env (node n, nil when absent): an external
// client's, each name a valid one that the harness does not set itself.
func (d *decoder) validateEnv(n *yaml.Node, c *Client) {
	if n == nil {
		return
	}
	if len(c.Command) == 0 {
		d.c.Add(n, "client.env", "env applies to an external client only", "add client.command, or remove env")
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if problem, hint := envProblem(k.Value, v.Value); problem != "" {
			d.c.Add(k, "client.env."+k.Value, problem, hint)
		}
	}
}

// validateRequires checks client.requires (node n, nil when absent): an
// external client's, each entry a name or a path.
func (d *decoder) validateRequires(n *yaml.Node, c *Client) {
	if n == nil {
		return
	}
	if len(c.Command) == 0 {
		d.c.Add(n, "client.requires", "requires applies to an external client only", "add client.command, or remove requires")
	}
	if n.Kind != yaml.SequenceNode {
		return
	}
	for i, r := range c.Requires {
		if strings.TrimSpace(r) == "" && i < len(n.Content) {
			d.c.Add(n.Content[i], fmt.Sprintf("client.requires[%d]", i), "empty requirement", "write a program name (node) or a path (../node_modules/openai)")
		}
	}
}

// validateExpect checks the expect block.
func (d *decoder) validateExpect(exp map[string]*yaml.Node, sc *Scenario) {
	d.validatePrompts(exp["prompts"], sc.Expect.Prompts)
	d.validateOutput(exp["output"], sc)
	d.validateFindings(exp["findings"], sc.Expect.Findings)
	if n := exp["selfReport"]; n != nil && sc.Expect.SelfReport && len(sc.Client.Command) == 0 {
		d.c.Add(n, "expect.selfReport", "selfReport applies to an external client only (the built-in client writes a trace, no telemetry)", "add client.command, or remove selfReport")
	}
	d.validateFailureTypes(exp["failureTypes"], sc.Expect.FailureTypes)
	switch sc.Expect.Outcome {
	case "", "success", "failure", "still_retrying":
	default:
		hint := "outcome is success, failure or still_retrying (the client neither succeeded nor gave up before the scenario ended)"
		if s := closest(sc.Expect.Outcome, []string{"success", "failure", "still_retrying"}); s != "" {
			hint = "did you mean " + s + "?"
		}
		d.errorf(exp["outcome"], "expect.outcome", hint, "unknown outcome %q", sc.Expect.Outcome)
	}
	if seq := exp["escalations"]; seq != nil && seq.Kind == yaml.SequenceNode {
		for i, e := range sc.Expect.Escalations {
			if e.From == "" || e.To == "" {
				d.c.Add(seq.Content[i], fmt.Sprintf("expect.escalations[%d]", i), "an escalation needs from and to", "write {from: claude-haiku-4-5, to: claude-sonnet-4-5}")
			}
			if e.Attempt < 0 {
				d.c.Add(seq.Content[i], fmt.Sprintf("expect.escalations[%d].attempt", i), "attempt is a server attempt number, 1 or more", "write the attempt that first asked for the new model: attempt: 4")
			}
		}
	}
	if sc.Expect.Tolerance.Ratio > 1 {
		d.errorf(mapping(exp["tolerance"])["ratio"], "expect.tolerance.ratio", "ratio is a fraction: 0.05 means 5%", "ratio %v is above 1", sc.Expect.Tolerance.Ratio)
	}
}

// keyLines records the lines of the top-level keys expect and client and of
// the keys of the expect mapping (see Scenario.Lines).
func keyLines(root *yaml.Node) map[string]int {
	lines := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "client":
			lines["client"] = k.Line
			if v.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(v.Content); j += 2 {
					if v.Content[j].Value == "command" {
						lines["client.command"] = v.Content[j].Line
					}
				}
			}
		case "expect":
			lines["expect"] = k.Line
			if v.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(v.Content); j += 2 {
					lines["expect."+v.Content[j].Value] = v.Content[j].Line
				}
			}
		}
	}
	return lines
}

// validateErrorContext checks client.validate and client.errorContext: the
// built-in client's alone, and validate needs something to check.
func (d *decoder) validateErrorContext(client map[string]*yaml.Node, sc *Scenario) {
	externalHint := "an external client validates and builds its own prompts; remove %s"
	if n, ok := client["validate"]; ok {
		vm := mapping(n)
		switch {
		case len(sc.Client.Command) > 0:
			d.c.Add(n, "client.validate", "validate applies to the built-in client only", fmt.Sprintf(externalHint, "validate"))
		case sc.Client.Validate == nil || len(sc.Client.Validate.Contains) == 0:
			d.c.Add(n, "client.validate", "validate needs contains", `write validate: {contains: ["the text a good answer holds"]}`)
		default:
			for i, c := range sc.Client.Validate.Contains {
				if c == "" || len(c) > 1024 {
					at := n
					if seq := vm["contains"]; seq != nil && seq.Kind == yaml.SequenceNode && i < len(seq.Content) {
						at = seq.Content[i]
					}
					d.c.Add(at, fmt.Sprintf("client.validate.contains[%d]", i), "a string must be 1 to 1024 bytes", "write the text a good answer holds")
				}
			}
		}
	}
	if n, ok := client["errorContext"]; ok && len(sc.Client.Command) > 0 {
		d.c.Add(n, "client.errorContext", "errorContext applies to the built-in client only", fmt.Sprintf(externalHint, "errorContext"))
	}
}

// validateOutput checks expect.output: an external client's, with at least
// one non-empty string to look for.
func (d *decoder) validateOutput(n *yaml.Node, sc *Scenario) {
	oe := sc.Expect.Output
	if n == nil || oe == nil {
		return
	}
	if len(sc.Client.Command) == 0 {
		d.c.Add(n, "expect.output", "output applies to an external client only", "add client.command, or remove output")
	}
	if len(oe.Contains)+len(oe.NotContains) == 0 {
		d.c.Add(n, "expect.output", "nothing to check", `add contains: ["the answer's last words"] or notContains: [...]`)
	}
	for _, s := range append(slices.Clone(oe.Contains), oe.NotContains...) {
		if s == "" || len(s) > 64<<10 {
			d.c.Add(n, "expect.output", "a string must be 1 byte to 64 KB", "write a substring of what the client prints")
		}
	}
}

// validatePrompts checks expect.prompts: an attempt number and at least one
// non-empty string to look for, each bounded.
func (d *decoder) validatePrompts(seq *yaml.Node, ps []PromptExpect) {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return
	}
	for i, p := range ps {
		if i >= len(seq.Content) {
			break
		}
		n := seq.Content[i]
		path := fmt.Sprintf("expect.prompts[%d]", i)
		if p.Attempt < 1 || p.Attempt > 1000 {
			d.c.Add(n, path+".attempt", "attempt must be 1 to 1000", "attempts count from 1: attempt: 2 is the first retry")
		}
		if len(p.Contains)+len(p.NotContains) == 0 {
			d.c.Add(n, path, "nothing to check", `add contains: ["Previous attempt failed"] or notContains: [...]`)
		}
		for _, s := range append(slices.Clone(p.Contains), p.NotContains...) {
			if s == "" || len(s) > 1024 {
				d.c.Add(n, path, "a string must be 1 to 1024 bytes", "write a substring of the prompt, e.g. \"Previous attempt failed\"")
				break
			}
		}
	}
}
