package analyze

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/retrylab/retrylab/trace/internal/fileio"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/internal/regfile"
	"github.com/retrylab/retrylab/internal/yamldiag"
)

// Alert states.
const (
	StateOK               = "ok"
	StateWarning          = "warning"
	StateFiring           = "firing"
	StateInsufficientData = "insufficient_data"
)

// Alert is a threshold on one of Metrics.
type Alert struct {
	Name       string   `yaml:"name"`      // defaults to Metric
	Metric     string   `yaml:"metric"`    // one of MetricNames
	Op         string   `yaml:"op"`        // > >= < <=
	Threshold  *float64 `yaml:"threshold"` // required
	MinSamples *int     `yaml:"minSamples"`
	Severity   string   `yaml:"severity"`
}

// AlertResult is an evaluated Alert.
type AlertResult struct {
	Name      string  `json:"name"`
	Op        string  `json:"op"`
	Threshold float64 `json:"threshold"`
	Value     float64 `json:"value"`
	Samples   int64   `json:"samples"`
	Lower     float64 `json:"lower"`
	Upper     float64 `json:"upper"`
	State     string  `json:"state"`
	Metric    string  `json:"-"`
	Severity  string  `json:"severity,omitempty"`
}

func f64(v float64) *float64 { return &v }

// DefaultAlerts are seed 003's four alerts.
func DefaultAlerts() []Alert {
	return []Alert{
		{Name: "provider_retry_rate", Metric: "provider_retry_rate", Op: ">", Threshold: f64(0.20)},
		{Name: "l2_escalation_rate", Metric: "l2_escalation_rate", Op: ">", Threshold: f64(0.30)},
		{Name: "avg_repair_iterations", Metric: "avg_repair_iterations", Op: ">", Threshold: f64(3)},
		{Name: "diagnosis_rate", Metric: "diagnosis_rate", Op: ">", Threshold: f64(0.10)},
	}
}

func compare(op string, v, t float64) bool {
	switch op {
	case ">":
		return v > t
	case ">=":
		return v >= t
	case "<":
		return v < t
	case "<=":
		return v <= t
	}
	return false
}

// EvaluateAlerts evaluates alerts against a. A rate alert is firing when
// its one-sided exact (Clopper–Pearson) bound at a's confidence is past the
// threshold (the lower bound for > and >=, the upper bound for < and <=;
// ExactBounds), so at most 1 − confidence of the time when the true rate
// sits at the threshold, whatever n; warning when only the point
// estimate is, insufficient_data when its samples are below its minSamples
// (defaultMin when unset), else ok. A non-rate metric (avg_repair_iterations)
// has no interval: lower = upper = value, and it fires on the value.
func EvaluateAlerts(a *Analysis, alerts []Alert, defaultMin int) ([]AlertResult, error) {
	out := make([]AlertResult, 0, len(alerts))
	for _, al := range alerts {
		v, n, rate, ok := a.Metric(al.Metric)
		if !ok {
			return nil, fmt.Errorf("alert %q: unknown metric %q", al.Name, al.Metric)
		}
		if al.Threshold == nil {
			return nil, fmt.Errorf("alert %q: no threshold", al.Name)
		}
		t := *al.Threshold
		r := AlertResult{Name: al.Name, Metric: al.Metric, Op: al.Op, Threshold: t, Value: v,
			Samples: n, Lower: v, Upper: v, Severity: al.Severity}
		if r.Name == "" {
			r.Name = al.Metric
		}
		if rate {
			r.Lower, r.Upper = RateBounds(v, n, a.Confidence)
		}
		minN := defaultMin
		if al.MinSamples != nil {
			minN = *al.MinSamples
		}
		bound := r.Lower
		if al.Op == "<" || al.Op == "<=" {
			bound = r.Upper
		}
		switch {
		case n < int64(max(minN, 1)):
			r.State = StateInsufficientData
		case compare(al.Op, bound, t):
			r.State = StateFiring
		case compare(al.Op, v, t):
			r.State = StateWarning
		default:
			r.State = StateOK
		}
		out = append(out, r)
	}
	return out, nil
}

// AlertError is a bad --alert flag, or every problem of an alerts file,
// each naming the file, the line and the field; Hint says what to do next.
type AlertError struct {
	file     string // "" for a --alert flag
	problems yamldiag.List
}

// alertError is an AlertError of one problem of file at line.
func alertError(file string, line int, field, msg string) *AlertError {
	return &AlertError{file: file, problems: yamldiag.List{{File: file, Line: line, Field: field, Msg: msg}}}
}

// Error is the problem, "file:line: field: msg", or every problem one a
// line.
func (e *AlertError) Error() string { return e.problems.Error() }

// Problems returns each problem, in line order.
func (e *AlertError) Problems() yamldiag.List { return e.problems }

// Hint tells the user what to do next.
func (e *AlertError) Hint() string {
	if len(e.problems) > 0 && e.problems[0].Hint != "" {
		return e.problems[0].Hint
	}
	if e.file == "" {
		return "write an alert as METRIC OP VALUE, e.g. --alert 'provider_retry_rate>0.2'; metrics: " + strings.Join(MetricNames, ", ")
	}
	return "each alert needs metric (" + strings.Join(MetricNames, ", ") + "), op (> >= < <=) and threshold; see 'retrylab trace analyze --help'"
}

// ParseAlert parses a --alert flag: METRIC OP VALUE with OP one of > >= < <=,
// e.g. "provider_retry_rate>0.2". Spaces around the parts are allowed.
func ParseAlert(s string) (Alert, error) {
	bad := func(msg string) (Alert, error) {
		return Alert{}, alertError("", 0, "", fmt.Sprintf("bad --alert %q: %s", s, msg))
	}
	i := strings.IndexAny(s, "<>")
	if i < 0 {
		return bad("no operator (want > >= < <=)")
	}
	op := s[i : i+1]
	rest := s[i+1:]
	if strings.HasPrefix(rest, "=") {
		op += "="
		rest = rest[1:]
	}
	metric := strings.TrimSpace(s[:i])
	if metric == "" {
		return bad("no metric before " + op)
	}
	if !isMetric(metric) {
		return bad("unknown metric " + strconv.Quote(metric))
	}
	v, err := parseThreshold(metric, strings.TrimSpace(rest))
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return bad("threshold " + strconv.Quote(strings.TrimSpace(rest)) + " is not a number")
	}
	return Alert{Name: metric, Metric: metric, Op: op, Threshold: &v}, nil
}

func isMetric(m string) bool {
	for _, n := range MetricNames {
		if n == m {
			return true
		}
	}
	return false
}

// LoadAlerts reads an alerts file (YAML, JSON being YAML too):
//
//	alerts:
//	  - name: provider_retry_rate   # defaults to the metric's name
//	    metric: provider_retry_rate
//	    op: ">"
//	    threshold: 0.20
//	    minSamples: 20
//	    severity: page
//
// Unknown fields are errors. Errors are *AlertError naming file, line and field.
func LoadAlerts(path string) ([]Alert, error) {
	return LoadAlertsContext(context.Background(), path)
}

// MaxAlertsFileBytes is the largest alerts file LoadAlerts reads: a larger
// one (a log given by mistake, /dev/zero) is an error, not read to its end.
const MaxAlertsFileBytes = 1 << 20

// LoadAlertsContext is LoadAlerts giving up when ctx is done. A regular
// file is read; a FIFO or bash's <(...) only when something has it open
// for writing (or it holds data), and then in a goroutine of its own, as
// trace.OpenContext does, so that a writer that never writes cannot keep it
// from returning an error wrapping the context's cause. A FIFO nothing
// writes to, a folder, a device or a socket is an error at once, never
// opened in a way that could block.
func LoadAlertsContext(ctx context.Context, path string) ([]Alert, error) {
	src, err := openAlerts(ctx, path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	data, err := io.ReadAll(io.LimitReader(src, MaxAlertsFileBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: stopped reading: %w", path, context.Cause(ctx))
		}
		return nil, alertError(path, 0, "", "cannot read alerts file: "+fileio.Cause(err))
	}
	if len(data) > MaxAlertsFileBytes {
		return nil, alertError(path, 0, "", fmt.Sprintf("larger than %d bytes: not an alerts file", MaxAlertsFileBytes))
	}
	return ParseAlerts(path, data)
}

// openAlerts opens the alerts file path for LoadAlertsContext.
func openAlerts(ctx context.Context, path string) (io.ReadCloser, error) {
	const hint = "give --alerts a YAML file (or bash's <(...)); a FIFO nothing writes to would wait for ever and a device may never end, so neither is read"
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, alertError(path, 0, "", "cannot read alerts file: "+fileio.Cause(err))
	case fi.IsDir():
		return nil, alertError(path, 0, "", "is a folder, not an alerts file")
	case fi.Mode()&fs.ModeNamedPipe != 0:
		p, err := regfile.OpenPipe(path)
		if errors.Is(err, regfile.ErrNoWriter) {
			e := alertError(path, 0, "", "is a FIFO (named pipe) that nothing writes to: not read")
			e.problems[0].Hint = hint
			return nil, e
		}
		if err != nil {
			return nil, alertError(path, 0, "", "cannot read alerts file: "+fileio.Cause(err))
		}
		ar := fileio.NewAsyncReader(ctx, func() (io.Reader, error) { return p, nil })
		return struct {
			io.Reader
			io.Closer
		}{ar, closers{ar, p}}, nil
	}
	f, err := regfile.Open(path)
	var nr *regfile.NotRegularError
	if errors.As(err, &nr) {
		e := alertError(path, 0, "", nr.Problem())
		e.problems[0].Hint = hint
		return nil, e
	}
	if err != nil {
		return nil, alertError(path, 0, "", "cannot read alerts file: "+fileio.Cause(err))
	}
	return f, nil
}

// closers closes each in turn.
type closers []io.Closer

func (cs closers) Close() error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// ParseAlerts parses the contents of an alerts file; name is used in
// errors. Every problem is reported at once, as one *AlertError.
func ParseAlerts(name string, data []byte) ([]Alert, error) {
	if err := oneDocument(name, data); err != nil {
		return nil, err
	}
	keys, listed := alertKeys(data)
	c := yamldiag.New(name)
	alerts, bad, err := decodeAlerts(data, keys, c)
	if err != nil {
		return nil, yamlError(name, err)
	}
	if len(alerts) == 0 && c.Len() == 0 {
		if listed {
			// "alerts: []" is how a file turns every alert off.
			return []Alert{}, nil
		}
		return nil, alertError(name, 0, "alerts", "no alerts defined")
	}
	for j := range alerts {
		if bad[j] {
			continue
		}
		for _, p := range checkAlert(&alerts[j], keys.values(j)) {
			c.AddAt(keys.line(j, p.field), 0, fmt.Sprintf("alerts[%d].%s", j, p.field), p.msg, "")
		}
	}
	if c.Len() > 0 {
		return nil, &AlertError{file: name, problems: c.List()}
	}
	return alerts, nil
}

// decodeAlerts decodes the alerts list, recording in c each field yaml
// could not decode (an unknown field, a value of the wrong type); bad
// holds the alerts with a value of the wrong type. err is a YAML error
// of another kind.
func decodeAlerts(data []byte, keys alertKeyNodes, c *yamldiag.Collector) (alerts []Alert, bad map[int]bool, err error) {
	var file struct {
		Alerts []Alert `yaml:"alerts"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	bad = map[int]bool{}
	err = dec.Decode(&file)
	if _, ok := err.(*yaml.TypeError); err != nil && !ok {
		return nil, nil, err
	}
	if err != nil {
		lines, msgs := yamldiag.Unmarshal(err)
		for i, line := range lines {
			j, field := keys.at(line)
			if j >= 0 && strings.HasPrefix(msgs[i], "cannot unmarshal") {
				bad[j] = true
			}
			c.AddAt(line, 0, field, alertMsg(msgs[i]), "")
		}
	}
	return file.Alerts, bad, nil
}

// oneDocument checks that data holds one YAML document: none is an empty
// file, and a second ("---") would be ignored without a word.
func oneDocument(name string, data []byte) error {
	var doc, extra yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return alertError(name, 0, "alerts", "empty alerts file")
		}
		return yamlError(name, err)
	}
	switch err := dec.Decode(&extra); {
	case err == nil:
		return alertError(name, extra.Line, "",
			"a second YAML document (---): an alerts file holds one; put every alert in its one alerts: list")
	case !errors.Is(err, io.EOF):
		return yamlError(name, err)
	}
	return nil
}

// alertKeyNodes are the entries of the alerts list, as nodes: where each
// alert and each of its keys is, and its values as written.
type alertKeyNodes []*yaml.Node

// alertKeys finds the alerts list's entries in data (a document that
// parses) and whether there is an explicit "alerts:" list, even an empty
// one.
func alertKeys(data []byte) (k alertKeyNodes, listed bool) {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, false
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "alerts" && m.Content[i+1].Kind == yaml.SequenceNode {
			k, listed = m.Content[i+1].Content, true
		}
	}
	return k, listed
}

// line is the line of alert j's key field, else of the alert.
func (k alertKeyNodes) line(j int, field string) int {
	if j >= len(k) {
		return 0
	}
	it := k[j]
	for x := 0; x+1 < len(it.Content); x += 2 {
		if it.Content[x].Value == field {
			return it.Content[x].Line
		}
	}
	return it.Line
}

// values are alert j's value nodes by key.
func (k alertKeyNodes) values(j int) map[string]*yaml.Node {
	if j >= len(k) {
		return nil
	}
	it := k[j]
	out := map[string]*yaml.Node{}
	for x := 0; x+1 < len(it.Content); x += 2 {
		out[it.Content[x].Value] = it.Content[x+1]
	}
	return out
}

// at names the alert and the field whose key is on line (the first one
// there), for a yaml error on that line: -1 and "" when none is.
func (k alertKeyNodes) at(line int) (int, string) {
	for j, it := range k {
		for x := 0; x+1 < len(it.Content) && line > 0; x += 2 {
			if it.Content[x].Line == line {
				return j, fmt.Sprintf("alerts[%d].%s", j, it.Content[x].Value)
			}
		}
	}
	return -1, ""
}

// alertProblem is a problem of one alert's field.
type alertProblem struct{ field, msg string }

// checkAlert checks a decoded alert and fills in its name and metric from
// each other; values are its value nodes by key (for the numbers as
// written). It returns every problem, in field order.
func checkAlert(al *Alert, values map[string]*yaml.Node) []alertProblem {
	var out []alertProblem
	add := func(field, msg string) { out = append(out, alertProblem{field, msg}) }
	if al.Metric == "" {
		al.Metric = al.Name
	}
	switch {
	case al.Metric == "":
		add("metric", "missing")
	case !isMetric(al.Metric):
		add("metric", "unknown metric "+strconv.Quote(al.Metric))
	}
	if al.Name == "" {
		al.Name = al.Metric
	}
	// Names and severities are printed in every format and on stderr.
	for _, f := range []struct{ field, v string }{{"name", al.Name}, {"severity", al.Severity}} {
		if why := unprintable(f.v); why != "" {
			add(f.field, strconv.Quote(f.v)+" "+why)
		}
	}
	if msg := checkOp(al.Op); msg != "" {
		add("op", msg)
	}
	if msg := checkThreshold(al.Threshold, values["threshold"]); msg != "" {
		add("threshold", msg)
	}
	if msg := checkMinSamples(al.MinSamples, values["minSamples"]); msg != "" {
		add("minSamples", msg)
	}
	return out
}

// checkOp says what is wrong with an alert's op, or "".
func checkOp(op string) string {
	switch op {
	case ">", ">=", "<", "<=":
		return ""
	case "":
		return `missing (want ">", ">=", "<" or "<=")`
	}
	return fmt.Sprintf(`%q is not one of ">", ">=", "<", "<="`, op)
}

// checkThreshold says what is wrong with an alert's threshold (written at
// n), or "".
func checkThreshold(t *float64, n *yaml.Node) string {
	switch {
	case t == nil:
		return "missing"
	case math.IsNaN(*t) || math.IsInf(*t, 0):
		return fmt.Sprintf("%s is not a finite number (want e.g. 0.2)", written(n, *t))
	}
	return ""
}

// checkMinSamples says what is wrong with an alert's minSamples (written
// at n), or "".
func checkMinSamples(m *int, n *yaml.Node) string {
	switch {
	case n != nil && n.ShortTag() != "!!int":
		return fmt.Sprintf("%s is not a whole number (want e.g. 20)", n.Value)
	case m != nil && *m < 0:
		return fmt.Sprintf("%d is negative (want 0 or more)", *m)
	}
	return ""
}

// written is a value as the file writes it, or as Go prints it when there
// is no node (an alert built in code).
func written(n *yaml.Node, v float64) string {
	if n != nil {
		return n.Value
	}
	return fmt.Sprint(v)
}

// maxAlertText is the longest alert name or severity.
const maxAlertText = 200

// unprintable says what keeps s from being printed as it is, or "".
func unprintable(s string) string {
	if len(s) > maxAlertText {
		return fmt.Sprintf("is longer than %d bytes", maxAlertText)
	}
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
			return fmt.Sprintf("holds the control or invisible character %U", r)
		}
	}
	return ""
}

// yamlError turns a yaml error ("yaml: line 3: ...") into an *AlertError.
func yamlError(name string, err error) *AlertError {
	line, msg := yamldiag.Syntax(err)
	return alertError(name, line, "", alertMsg(msg))
}

// alertMsg says a yaml message in the file's terms, not Go's.
func alertMsg(msg string) string {
	if f, ok := strings.CutPrefix(msg, "field "); ok {
		if i := strings.Index(f, " not found in type"); i > 0 {
			return "unknown field " + strconv.Quote(f[:i])
		}
	}
	if v, ok := strings.CutPrefix(msg, "cannot unmarshal !!"); ok {
		// "cannot unmarshal !!str `abc` into float64"
		if got, into, ok := strings.Cut(v, " into "); ok {
			if _, val, ok := strings.Cut(got, " "); ok {
				want := "a " + into
				if strings.HasPrefix(into, "float") || strings.HasPrefix(into, "int") {
					want = "a number"
				}
				return val + " is not " + want
			}
		}
	}
	return msg
}

// parseThreshold parses an --alert threshold: a number, or for a metric in
// seconds (time_to_recovery_*) also a duration with unit s or ms (30s,
// 500ms).
func parseThreshold(metric, s string) (float64, error) {
	if d, ok := LookupMetric(metric); ok && d.Unit == "seconds" {
		switch {
		case strings.HasSuffix(s, "ms"):
			v, err := strconv.ParseFloat(strings.TrimSuffix(s, "ms"), 64)
			return v / 1000, err
		case strings.HasSuffix(s, "s"):
			return strconv.ParseFloat(strings.TrimSuffix(s, "s"), 64)
		}
	}
	return strconv.ParseFloat(s, 64)
}
