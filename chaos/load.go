package chaos

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/retry"
)

// IsPolicyFileName reports whether a file found in a scenario folder is a
// policy file kept beside the scenarios (NAME.policy.yaml, .yml or .json),
// which a folder walk leaves out; named explicitly, it is read as a scenario.
func IsPolicyFileName(path string) bool {
	base := strings.ToLower(filepath.Base(path))
	return strings.HasSuffix(strings.TrimSuffix(base, filepath.Ext(base)), ".policy")
}

// LoadError is one problem found in a scenario file. It names the file, the
// line and column, the field path (e.g. "attempts[2].retryAfter") and says
// what to do next (Hint, which Error leaves out: LoadErrors prints it once).
type LoadError struct {
	File   string
	Line   int
	Column int
	Field  string // field path; "" for the whole document
	Msg    string
	Hint   string
}

func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// LoadErrors is every problem found in one or more scenario files, in file
// and line order.
//
// Each hint is printed once: the CLI prints Error() after "error: " and then
// Hint() after "hint: ". With one error, Error() is that error alone and
// Hint() its hint. With several, Error() puts each error's hint on an
// indented "hint:" line under it, and Hint() says what to do about them all.
type LoadErrors []*LoadError

func (es LoadErrors) Error() string {
	if len(es) == 1 {
		return es[0].Error()
	}
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
		if e.Hint != "" {
			b.WriteString("\n  hint: ")
			b.WriteString(e.Hint)
		}
	}
	return b.String()
}

// Hint is the hint for the CLI's "hint:" line: the error's own hint when
// there is one error, else what to do about several.
func (es LoadErrors) Hint() string {
	if len(es) == 1 {
		return es[0].Hint
	}
	return "fix the errors above; run 'retrylab chaos validate FILE' to check a file without running it"
}

// nodeError is returned by UnmarshalYAML methods so that the loader can
// turn it into a LoadError with the node's position and field path.
type nodeError struct {
	node *yaml.Node
	sub  string // appended to the field path, e.g. "[1]"
	msg  string
	hint string
}

func (e *nodeError) Error() string { return e.msg }

// Defaults applied by the loader.
const (
	DefaultProvider       = "anthropic"
	DefaultAnthropicModel = "claude-haiku-4-5"
	DefaultOpenAIModel    = "gpt-4o-mini"
)

// Providers the mock speaks.
var providers = []string{"anthropic", "openai"}

// Toxic types Toxiproxy v2 knows.
var toxicTypes = []string{"bandwidth", "latency", "limit_data", "noop", "reset_peer", "slicer", "slow_close", "timeout"}

// faultKinds are the keys of a fault mapping that each name a kind.
var faultKinds = []string{"status", "sseError", "drop", "hang", "reset", "latency", "toxics", "ok"}

// statusOnly are fault keys that only make sense with status.
var statusOnly = []string{"retryAfter", "errorType", "message", "headers"}

// LoadScenario reads and strictly validates one scenario file. Every problem
// is reported, as LoadErrors, with its file, line, field and a hint.
func LoadScenario(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, LoadErrors{{File: path, Msg: err.Error(), Hint: "check the path; scenario files are YAML or JSON"}}
	}
	return ParseScenario(path, data)
}

// ParseScenario parses data as the scenario file path.
func ParseScenario(path string, data []byte) (*Scenario, error) {
	d := &decoder{file: path}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line := 0
		msg := err.Error()
		// yaml.v3 syntax errors read "yaml: line N: ..."
		if rest, ok := strings.CutPrefix(msg, "yaml: line "); ok {
			if i := strings.Index(rest, ":"); i > 0 {
				if n, err := strconv.Atoi(rest[:i]); err == nil {
					line, msg = n, strings.TrimSpace(rest[i+1:])
				}
			}
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		return nil, LoadErrors{{File: path, Line: line, Column: 1, Msg: "invalid YAML: " + msg, Hint: "check indentation and quoting; JSON is valid YAML too"}}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, LoadErrors{{File: path, Msg: "empty scenario file", Hint: "a scenario needs at least attempts and expect; see docs/chaos.md"}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "", "a scenario must be a mapping, got %s", kindName(root), "start the file with keys such as name:, attempts:, expect:")
		return nil, d.errs
	}
	sc := &Scenario{File: path, Lines: keyLines(root)}
	d.decode(root, reflect.ValueOf(sc).Elem(), "")
	d.validate(root, sc)
	if len(d.errs) > 0 {
		sort.SliceStable(d.errs, func(i, j int) bool {
			if d.errs[i].Line != d.errs[j].Line {
				return d.errs[i].Line < d.errs[j].Line
			}
			return d.errs[i].Column < d.errs[j].Column
		})
		return nil, d.errs
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
	var files []string
	var errs LoadErrors
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			errs = append(errs, &LoadError{File: p, Msg: "cannot read: " + strings.TrimPrefix(err.Error(), "stat "+p+": "), Hint: "give scenario files or folders that hold them"})
			continue
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		var found []string
		skipped := false
		_ = filepath.WalkDir(p, func(f string, de fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if de.IsDir() {
				if skipDir(f, skip) {
					skipped = true
					return filepath.SkipDir
				}
				return nil
			}
			switch strings.ToLower(filepath.Ext(f)) {
			case ".yaml", ".yml", ".json":
				if !IsPolicyFileName(f) {
					found = append(found, f)
				}
			}
			return nil
		})
		sort.Strings(found)
		if len(found) == 0 {
			msg := "no scenario files (*.yaml, *.yml, *.json) in this folder"
			if skipped {
				msg += " outside run folders"
			}
			errs = append(errs, &LoadError{File: p, Msg: msg, Hint: "give scenario files or folders that hold them"})
		}
		files = append(files, found...)
	}
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

type decoder struct {
	file string
	errs LoadErrors
}

func (d *decoder) errorf(n *yaml.Node, field, format string, args ...any) {
	hint := ""
	if len(args) > 0 {
		if h, ok := args[len(args)-1].(string); ok && strings.Count(format, "%") < len(args) {
			hint = h
			args = args[:len(args)-1]
		}
	}
	e := &LoadError{File: d.file, Field: field, Msg: fmt.Sprintf(format, args...), Hint: hint}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var (
	nodeType        = reflect.TypeOf(yaml.Node{})
	unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
)

// decode fills v from n, reporting every problem instead of stopping at the first.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	t := v.Type()
	if t == nodeType {
		v.Set(reflect.ValueOf(*n))
		return
	}
	if v.CanAddr() && v.Addr().Type().Implements(unmarshalerType) {
		if err := v.Addr().Interface().(yaml.Unmarshaler).UnmarshalYAML(n); err != nil {
			var ne *nodeError
			if errors.As(err, &ne) {
				d.errorf(ne.node, path+ne.sub, "%s", ne.msg, ne.hint)
			} else {
				d.errorf(n, path, "%s", err.Error(), "")
			}
		}
		return
	}
	isNull := n.Kind == yaml.ScalarNode && n.Tag == "!!null"
	switch t.Kind() {
	case reflect.Pointer:
		if isNull {
			if t.Elem().Kind() == reflect.Struct && t.Elem().NumField() == 0 {
				v.Set(reflect.New(t.Elem())) // "hang:" means hang: {}
			}
			return
		}
		p := reflect.New(t.Elem())
		d.decode(n, p.Elem(), path)
		v.Set(p)
	case reflect.Struct:
		if isNull {
			return
		}
		if n.Kind != yaml.MappingNode {
			d.errorf(n, path, "want a mapping, got %s", kindName(n), "write key: value pairs (or {} for nothing)")
			return
		}
		fields := map[string]int{}
		var known []string
		for i := 0; i < t.NumField(); i++ {
			tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
			if tag == "" || tag == "-" {
				continue
			}
			fields[tag] = i
			known = append(known, tag)
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			fp := join(path, k.Value)
			idx, ok := fields[k.Value]
			if !ok {
				hint := "known keys: " + strings.Join(known, ", ")
				if s := closest(k.Value, known); s != "" {
					hint = "did you mean " + s + "?"
				}
				d.errorf(k, fp, "unknown key %q", k.Value, hint)
				continue
			}
			if seen[k.Value] {
				d.errorf(k, fp, "key %q appears twice", k.Value, "keep one of them")
				continue
			}
			seen[k.Value] = true
			d.decode(val, v.Field(idx), fp)
		}
	case reflect.Slice:
		if isNull {
			return
		}
		if n.Kind != yaml.SequenceNode {
			d.errorf(n, path, "want a list, got %s", kindName(n), "write a list: [a, b] or one '- item' per line")
			return
		}
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.decode(c, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(s)
	case reflect.Map:
		if isNull {
			return
		}
		if n.Kind != yaml.MappingNode {
			d.errorf(n, path, "want a mapping, got %s", kindName(n), "write key: value pairs")
			return
		}
		m := reflect.MakeMap(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			ev := reflect.New(t.Elem()).Elem()
			if t.Elem().Kind() == reflect.Interface {
				var x any
				if err := val.Decode(&x); err != nil {
					d.errorf(val, join(path, k.Value), "%s", err.Error(), "")
					continue
				}
				if x != nil {
					ev.Set(reflect.ValueOf(x))
				}
			} else {
				d.decode(val, ev, join(path, k.Value))
			}
			m.SetMapIndex(reflect.ValueOf(k.Value), ev)
		}
		v.Set(m)
	case reflect.String:
		if n.Kind != yaml.ScalarNode || isNull {
			d.errorf(n, path, "want a string, got %s", kindName(n), "quote the value")
			return
		}
		v.SetString(n.Value)
	case reflect.Int, reflect.Int64:
		i, err := strconv.ParseInt(n.Value, 0, 64)
		if n.Kind != yaml.ScalarNode || err != nil {
			d.errorf(n, path, "want a whole number, got %s", describe(n), "write a number such as 3")
			return
		}
		if i < 0 {
			d.errorf(n, path, "must not be negative, got %d", i, "use 0 or a positive number")
			return
		}
		v.SetInt(i)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(n.Value, 64)
		if n.Kind != yaml.ScalarNode || err != nil {
			d.errorf(n, path, "want a number, got %s", describe(n), "write a number such as 0.1")
			return
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			d.errorf(n, path, "want a number, got %s", describe(n), "write a finite number such as 0.1")
			return
		}
		if f < 0 {
			d.errorf(n, path, "must not be negative, got %v", f, "use 0 or a positive number")
			return
		}
		v.SetFloat(f)
	case reflect.Bool:
		var b bool
		if err := n.Decode(&b); err != nil {
			d.errorf(n, path, "want true or false, got %s", describe(n), "")
			return
		}
		v.SetBool(b)
	default:
		d.errorf(n, path, "cannot decode into %s", t, "")
	}
}

// validate checks what the types alone cannot, and applies defaults.
func (d *decoder) validate(root *yaml.Node, sc *Scenario) {
	top := mapping(root)
	if sc.Name == "" {
		base := filepath.Base(d.file)
		sc.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	if why := checkName(sc.Name); why != "" {
		hint := "use letters, digits and dashes"
		if len(sc.Name) > MaxNameLen {
			hint = fmt.Sprintf("shorten it to %d bytes at most (it names the run folder); say more in description", MaxNameLen)
		}
		if top["name"] == nil {
			hint += "; the name comes from the file name: rename the file or add name:"
		}
		d.errorf(top["name"], "name", "%s", why, hint)
	}
	switch sc.Provider {
	case "":
		sc.Provider = DefaultProvider
	case "anthropic", "openai":
	default:
		d.errorf(top["provider"], "provider", "unknown provider %q", sc.Provider, "providers: "+strings.Join(providers, ", "))
	}
	if sc.Model == "" {
		sc.Model = DefaultAnthropicModel
		if sc.Provider == "openai" {
			sc.Model = DefaultOpenAIModel
		}
	}
	if sc.Requests == 0 {
		sc.Requests = 1
	}
	if n, ok := top["timeScale"]; ok && isZero(n) {
		d.errorf(n, "timeScale", "timeScale must be above 0", "0.1 makes every wait ten times shorter")
	} else if why := CheckTimeScale(sc.TimeScale); ok && sc.TimeScale != 0 && why != "" {
		d.errorf(n, "timeScale", "timeScale %s", why, TimeScaleHint)
	}
	if sc.TimeScale == 0 {
		sc.TimeScale = 1
	}
	client := mapping(top["client"])
	if n, ok := client["policy"]; ok && n.Kind == yaml.ScalarNode && isPolicyPath(n.Value) {
		path, _ := PolicyPath(sc)
		if _, err := retry.LoadPolicyFile(path); err != nil {
			hint := "client.policy names a policy file, relative to the scenario file's folder; see docs/policy.md"
			var pe *retry.PolicyError
			if errors.As(err, &pe) && pe.Hint() != "" {
				hint = pe.Hint()
			}
			d.errorf(n, "client.policy", "policy file %s", err.Error(), hint)
		}
	} else if ok {
		if _, err := retry.DecodePolicyNode(n, d.file); err != nil {
			var pe *retry.PolicyError
			if errors.As(err, &pe) {
				e := &LoadError{File: d.file, Line: pe.Line, Column: 1, Field: "client.policy", Msg: pe.Msg, Hint: pe.Help}
				if pe.Field != "" && pe.Field != "policy" {
					e.Field += "." + pe.Field
				}
				if pe.Line == n.Line || pe.Line == 0 {
					e.Line, e.Column = n.Line, n.Column
				}
				d.errs = append(d.errs, e)
			} else {
				d.errorf(n, "client.policy", "%s", err.Error(), "use a preset name or an inline policy mapping; see docs/policy.md")
			}
		}
	}
	if n, ok := client["operation"]; ok && !contains(Operations, sc.Client.Operation) && n.Kind == yaml.ScalarNode {
		hint := "operation is safe, conditional or irreversible"
		if s := closest(sc.Client.Operation, Operations); s != "" {
			hint = "did you mean " + s + "?"
		}
		d.errorf(n, "client.operation", "unknown operation %q", sc.Client.Operation, hint)
	}
	if sc.Client.Operation != "" && len(sc.Client.Command) > 0 {
		d.errorf(client["operation"], "client.operation", "operation applies to the built-in client only", "an external client (client.command) decides for itself what it retries; remove operation")
	}
	if n, ok := client["requires"]; ok && len(sc.Client.Command) == 0 {
		d.errorf(n, "client.requires", "requires applies to an external client only", "add client.command, or remove requires")
	}
	if seq := client["requires"]; seq != nil && seq.Kind == yaml.SequenceNode {
		for i, r := range sc.Client.Requires {
			if strings.TrimSpace(r) == "" && i < len(seq.Content) {
				d.errorf(seq.Content[i], fmt.Sprintf("client.requires[%d]", i), "empty requirement", "write a program name (node) or a path (../node_modules/openai)")
			}
		}
	}
	if n, ok := client["command"]; ok && len(sc.Client.Command) == 0 && n.Kind == yaml.SequenceNode {
		d.errorf(n, "client.command", "empty command", `write the program and its arguments: ["python3", "agent.py"]`)
	}
	d.validateErrorContext(client, sc)
	if seq := top["attempts"]; seq != nil && seq.Kind == yaml.SequenceNode {
		for i, fn := range seq.Content {
			if i < len(sc.Attempts) {
				sc.Attempts[i].Line = fn.Line
				d.validateFault(fn, &sc.Attempts[i], fmt.Sprintf("attempts[%d]", i))
			}
		}
	}
	exp := mapping(top["expect"])
	d.validatePrompts(exp["prompts"], sc.Expect.Prompts)
	d.validateFailureTypes(exp["failureTypes"], sc.Expect.FailureTypes)
	switch sc.Expect.Outcome {
	case "", "success", "failure":
	default:
		d.errorf(exp["outcome"], "expect.outcome", "unknown outcome %q", sc.Expect.Outcome, "outcome is success or failure")
	}
	if seq := exp["escalations"]; seq != nil && seq.Kind == yaml.SequenceNode {
		for i, e := range sc.Expect.Escalations {
			if e.From == "" || e.To == "" {
				d.errorf(seq.Content[i], fmt.Sprintf("expect.escalations[%d]", i), "an escalation needs from and to", "write {from: claude-haiku-4-5, to: claude-sonnet-4-5}")
			}
		}
	}
	if sc.Expect.Tolerance.Ratio > 1 {
		d.errorf(mapping(exp["tolerance"])["ratio"], "expect.tolerance.ratio", "ratio %v is above 1", sc.Expect.Tolerance.Ratio, "ratio is a fraction: 0.05 means 5%")
	}
}

func (d *decoder) validateFault(n *yaml.Node, f *Fault, path string) {
	if n.Kind != yaml.MappingNode {
		return
	}
	m := mapping(n)
	var kinds []string
	for _, k := range faultKinds {
		if _, ok := m[k]; ok {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) > 1 {
		d.errorf(n, path, "one attempt has %d fault kinds (%s)", len(kinds), strings.Join(kinds, ", "), "give each attempt one kind; add another list item for the next attempt")
	}
	if len(kinds) == 0 && len(m) > 0 {
		for _, k := range statusOnly {
			if _, ok := m[k]; ok {
				d.errorf(m[k], join(path, k), "%s needs status", k, "add status: 429 (or the status you want) to this attempt")
			}
		}
	}
	if f.Status != 0 && (f.Status < 100 || f.Status > 599) {
		d.errorf(m["status"], join(path, "status"), "status %d is not an HTTP status", f.Status, "use a status between 100 and 599, e.g. 429 or 529")
	}
	d.validateHeaders(m["headers"], f.Headers, join(path, "headers"))
	if f.OK != nil {
		tn := mapping(m["ok"])["text"]
		switch {
		case len(f.OK.Text) > MaxOKTextBytes:
			d.errorf(tn, join(path, "ok.text"), "text is %d bytes, over the %d-byte limit", len(f.OK.Text), MaxOKTextBytes, "a response text that fails validation needs a sentence, not a book")
		case !utf8.ValidString(f.OK.Text):
			d.errorf(tn, join(path, "ok.text"), "text is not valid UTF-8", "write the text as plain UTF-8")
		}
	}
	for i, tx := range f.Toxics {
		tp := fmt.Sprintf("%s.toxics[%d]", path, i)
		tn := m["toxics"].Content[i]
		tm := mapping(tn)
		d.validateToxicAttrs(tn, tm["attributes"], tx.Type, tx.Attributes, tp)
		if !contains(toxicTypes, tx.Type) {
			hint := "toxic types: " + strings.Join(toxicTypes, ", ")
			if s := closest(tx.Type, toxicTypes); s != "" {
				hint = "did you mean " + s + "?"
			}
			node := tm["type"]
			if node == nil {
				node = tn
			}
			d.errorf(node, join(tp, "type"), "unknown toxic type %q", tx.Type, hint)
		}
		switch tx.Stream {
		case "", "upstream", "downstream":
		default:
			d.errorf(tm["stream"], join(tp, "stream"), "unknown stream %q", tx.Stream, "stream is upstream or downstream")
		}
		if tx.Toxicity > 1 {
			d.errorf(tm["toxicity"], join(tp, "toxicity"), "toxicity %v is above 1", tx.Toxicity, "toxicity is a probability; leave it out for 1.0")
		}
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

func isZero(n *yaml.Node) bool {
	f, err := strconv.ParseFloat(n.Value, 64)
	return n.Kind == yaml.ScalarNode && err == nil && f == 0
}

func mapping(n *yaml.Node) map[string]*yaml.Node {
	m := map[string]*yaml.Node{}
	if n == nil || n.Kind != yaml.MappingNode {
		return m
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		m[n.Content[i].Value] = n.Content[i+1]
	}
	return m
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

func describe(n *yaml.Node) string { return kindName(n) }

// closest returns the known key nearest to s, if it is near enough to be a typo.
func closest(s string, known []string) string {
	best, bestD := "", 1<<30
	for _, k := range known {
		dist := levenshtein(strings.ToLower(s), strings.ToLower(k))
		if dist < bestD {
			best, bestD = k, dist
		}
	}
	limit := max(2, len(s)/3)
	if bestD <= limit {
		return best
	}
	return ""
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// UnmarshalYAML reads a Go duration string ("2s", "300ms"); a bare 0 is
// allowed. Negative durations are rejected.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return &nodeError{node: n, msg: "want a duration, got " + kindName(n), hint: "write a duration such as 2s, 300ms or 1m30s"}
	}
	if n.Value == "0" {
		*d = 0
		return nil
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		hint := "write a duration such as 2s, 300ms or 1m30s"
		if _, nerr := strconv.ParseFloat(n.Value, 64); nerr == nil {
			hint = fmt.Sprintf("add a unit: %ss or %sms", n.Value, n.Value)
		} else if durationRE.MatchString(n.Value) {
			// Well formed, yet ParseDuration refused it: it overflows.
			return &nodeError{node: n, msg: fmt.Sprintf("duration %q is too long", n.Value), hint: "durations go up to 24h"}
		}
		return &nodeError{node: n, msg: fmt.Sprintf("bad duration %q", n.Value), hint: hint}
	}
	if v < 0 {
		return &nodeError{node: n, msg: fmt.Sprintf("negative duration %q", n.Value), hint: "durations must be 0 or more"}
	}
	if v > MaxScenarioDuration {
		return &nodeError{node: n, msg: fmt.Sprintf("duration %q is too long", n.Value), hint: "durations go up to 24h"}
	}
	*d = Duration(v)
	return nil
}

// UnmarshalYAML reads "policy" or a list of durations.
func (ds *Delays) UnmarshalYAML(n *yaml.Node) error {
	ds.Set = true
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Value == "policy" {
			ds.Policy = true
			return nil
		}
		return &nodeError{node: n, msg: fmt.Sprintf("delays must be a list of durations or \"policy\", got %q", n.Value), hint: "write delays: [2s, 4s] or delays: policy"}
	case yaml.SequenceNode:
		ds.List = make([]Duration, len(n.Content))
		for i, c := range n.Content {
			if err := ds.List[i].UnmarshalYAML(c); err != nil {
				ne := err.(*nodeError)
				ne.sub = fmt.Sprintf("[%d]", i)
				return ne
			}
		}
		return nil
	}
	return &nodeError{node: n, msg: "delays must be a list of durations or \"policy\"", hint: "write delays: [2s, 4s] or delays: policy"}
}

// durationRE matches what time.ParseDuration reads, whatever the size.
var durationRE = regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// validateErrorContext checks client.validate and client.errorContext: the
// built-in client's alone, and validate needs something to check.
func (d *decoder) validateErrorContext(client map[string]*yaml.Node, sc *Scenario) {
	externalHint := "an external client validates and builds its own prompts; remove %s"
	if n, ok := client["validate"]; ok {
		vm := mapping(n)
		switch {
		case len(sc.Client.Command) > 0:
			d.errorf(n, "client.validate", "validate applies to the built-in client only", fmt.Sprintf(externalHint, "validate"))
		case sc.Client.Validate == nil || len(sc.Client.Validate.Contains) == 0:
			d.errorf(n, "client.validate", "validate needs contains", `write validate: {contains: ["the text a good answer holds"]}`)
		default:
			for i, c := range sc.Client.Validate.Contains {
				if c == "" || len(c) > 1024 {
					at := n
					if seq := vm["contains"]; seq != nil && seq.Kind == yaml.SequenceNode && i < len(seq.Content) {
						at = seq.Content[i]
					}
					d.errorf(at, fmt.Sprintf("client.validate.contains[%d]", i), "a string must be 1 to 1024 bytes", "write the text a good answer holds")
				}
			}
		}
	}
	if n, ok := client["errorContext"]; ok && len(sc.Client.Command) > 0 {
		d.errorf(n, "client.errorContext", "errorContext applies to the built-in client only", fmt.Sprintf(externalHint, "errorContext"))
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
			d.errorf(n, path+".attempt", "attempt must be 1 to 1000", "attempts count from 1: attempt: 2 is the first retry")
		}
		if len(p.Contains)+len(p.NotContains) == 0 {
			d.errorf(n, path, "nothing to check", `add contains: ["Previous attempt failed"] or notContains: [...]`)
		}
		for _, s := range append(slices.Clone(p.Contains), p.NotContains...) {
			if s == "" || len(s) > 1024 {
				d.errorf(n, path, "a string must be 1 to 1024 bytes", "write a substring of the prompt, e.g. \"Previous attempt failed\"")
				break
			}
		}
	}
}
