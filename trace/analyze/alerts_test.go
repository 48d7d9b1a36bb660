package analyze

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseAlertsRejectsHostileValues is a regression test: thresholds
// .nan and .inf, minSamples 2.5, and a second YAML document were accepted
// (a NaN threshold never fires; the second document was ignored).
func TestParseAlertsRejectsHostileValues(t *testing.T) {
	t.Parallel()
	const head = "alerts:\n  - metric: provider_retry_rate\n    op: \">\"\n"
	tests := []struct {
		name, in, wantErr string
	}{
		{"threshold .nan", head + "    threshold: .nan\n", "a.yaml:4: alerts[0].threshold: .nan is not a finite number (want e.g. 0.2)"},
		{"threshold .NaN", head + "    threshold: .NaN\n", "a.yaml:4: alerts[0].threshold: .NaN is not a finite number (want e.g. 0.2)"},
		{"threshold .inf", head + "    threshold: .inf\n", "a.yaml:4: alerts[0].threshold: .inf is not a finite number (want e.g. 0.2)"},
		{"threshold -.inf", head + "    threshold: -.inf\n", "a.yaml:4: alerts[0].threshold: -.inf is not a finite number (want e.g. 0.2)"},
		{"threshold +.Inf", head + "    threshold: +.Inf\n", "a.yaml:4: alerts[0].threshold: +.Inf is not a finite number (want e.g. 0.2)"},
		{"minSamples 2.5", head + "    threshold: 0.2\n    minSamples: 2.5\n", "a.yaml:5: alerts[0].minSamples: 2.5 is not a whole number (want e.g. 20)"},
		{"minSamples 1e3", head + "    threshold: 0.2\n    minSamples: 1e3\n", "a.yaml:5: alerts[0].minSamples: 1e3 is not a whole number (want e.g. 20)"},
		{"minSamples negative", head + "    threshold: 0.2\n    minSamples: -1\n", "a.yaml:5: alerts[0].minSamples: -1 is negative (want 0 or more)"},
		{"minSamples .nan", head + "    threshold: 0.2\n    minSamples: .nan\n", "a.yaml:5: alerts[0].minSamples: `.nan` is not a number"},
		{"second document", head + "    threshold: 0.2\n---\nalerts: []\n", "a.yaml:5: a second YAML document (---): an alerts file holds one; put every alert in its one alerts: list"},
		{"second empty document", head + "    threshold: 0.2\n---\n", "a.yaml:5: a second YAML document (---): an alerts file holds one; put every alert in its one alerts: list"},
		{"minSamples 20 ok", head + "    threshold: 0.2\n    minSamples: 20\n", ""},
		// Names and severities are printed: no terminal escape, no newline.
		{"name with an escape", head + "    threshold: 0.2\n    name: \"x\\e[31my\"\n", `a.yaml:5: alerts[0].name: "x\x1b[31my" holds the control or invisible character U+001B`},
		{"severity with a newline", head + "    threshold: 0.2\n    severity: \"a\\nb\"\n", `a.yaml:5: alerts[0].severity: "a\nb" holds the control or invisible character U+000A`},
		{"name with a bidi override", head + "    threshold: 0.2\n    name: \"a\\u202eb\"\n", `a.yaml:5: alerts[0].name: "a\u202eb" holds the control or invisible character U+202E`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseAlerts("a.yaml", []byte(tt.in))
			got := ""
			if err != nil {
				got = err.Error()
				var ae *AlertError
				if !errors.As(err, &ae) || ae.Hint() == "" {
					t.Errorf("error %v is not an *AlertError with a hint", err)
				}
			}
			if got != tt.wantErr {
				t.Errorf("ParseAlerts() error = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

// TestParseAlertRejectsNonFinite: --alert with NaN or Inf is an error.
func TestParseAlertRejectsNonFinite(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"provider_retry_rate>NaN", "provider_retry_rate>Inf", "provider_retry_rate<-Inf", "provider_retry_rate>=+inf", "provider_retry_rate>1e999"} {
		if _, err := ParseAlert(s); err == nil {
			t.Errorf("ParseAlert(%q) accepted", s)
		}
	}
}

// TestAnalyzeRejectsNaNConfidence: a NaN confidence is out of range.
func TestAnalyzeRejectsNaNConfidence(t *testing.T) {
	t.Parallel()
	for _, c := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1, 0.5} {
		if _, err := Run(context.Background(), nil, Options{Confidence: c}); err == nil {
			t.Errorf("Run accepted confidence %v", c)
		}
	}
}

// TestLoadAlertsBounded is a regression test: the alerts file was read
// whole whatever it was (--alerts /dev/zero grew without end), and a FIFO
// that nobody wrote to blocked past any cancel.
func TestLoadAlertsBounded(t *testing.T) {
	t.Parallel()
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, []byte("alerts: []\n#"+strings.Repeat("x", MaxAlertsFileBytes)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{big: "larger than 1048576 bytes", "/dev/zero": "is a character device, not a regular file"} {
		if _, err := os.Stat(path); err != nil {
			continue // no /dev/zero here
		}
		_, err := LoadAlerts(path)
		var ae *AlertError
		if !errors.As(err, &ae) || !strings.Contains(ae.Error(), want) {
			t.Errorf("LoadAlerts(%s) = %v, want an AlertError: %s", path, err, want)
		}
	}
	if _, err := LoadAlerts(t.TempDir()); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("LoadAlerts(a folder) = %v, want an error saying it is a folder", err)
	}
}

// TestParseAlertsEveryProblem: the problems of an alerts file are reported
// at once, in line order; an alert with a value yaml cannot decode is not
// checked further (its threshold would read as missing), one with an
// unknown field is.
func TestParseAlertsEveryProblem(t *testing.T) {
	t.Parallel()
	src := "alerts:\n" +
		"  - metric: provider_retry_rate\n    op: \"=\"\n    threshold: 0.2\n" +
		"  - metric: nope\n    threshold: abc\n" +
		"  - metric: diagnosis_rate\n    op: \">\"\n    threshold: .inf\n    minSamples: -2\n    colour: red\n"
	_, err := ParseAlerts("a.yaml", []byte(src))
	var ae *AlertError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want an *AlertError", err)
	}
	want := `a.yaml:3: alerts[0].op: "=" is not one of ">", ">=", "<", "<="
a.yaml:6: alerts[1].threshold: ` + "`abc`" + ` is not a number
a.yaml:9: alerts[2].threshold: .inf is not a finite number (want e.g. 0.2)
a.yaml:10: alerts[2].minSamples: -2 is negative (want 0 or more)
a.yaml:11: alerts[2].colour: unknown field "colour"`
	if got := err.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(ae.Hint(), "each alert needs metric") {
		t.Errorf("Hint() = %q", ae.Hint())
	}
	// Without the decoding problems, every check of every alert is reported.
	src = "alerts:\n  - metric: nope\n  - metric: diagnosis_rate\n    op: \">\"\n    threshold: .inf\n    minSamples: -2\n"
	_, err = ParseAlerts("a.yaml", []byte(src))
	want = `a.yaml:2: alerts[0].metric: unknown metric "nope"
a.yaml:2: alerts[0].op: missing (want ">", ">=", "<" or "<=")
a.yaml:2: alerts[0].threshold: missing
a.yaml:5: alerts[1].threshold: .inf is not a finite number (want e.g. 0.2)
a.yaml:6: alerts[1].minSamples: -2 is negative (want 0 or more)`
	if err == nil || err.Error() != want {
		t.Errorf("Error() =\n%v\nwant\n%s", err, want)
	}
}

// TestCheckAlert table-tests the checks of one decoded alert.
func TestCheckAlert(t *testing.T) {
	t.Parallel()
	two, neg := 2.0, -1
	tests := []struct {
		name     string
		al       Alert
		want     []alertProblem
		wantName string
	}{
		{"complete", Alert{Metric: "diagnosis_rate", Op: ">", Threshold: &two}, nil, "diagnosis_rate"},
		{"metric from the name", Alert{Name: "diagnosis_rate", Op: "<=", Threshold: &two}, nil, "diagnosis_rate"},
		{"nothing", Alert{}, []alertProblem{{"metric", "missing"}, {"op", `missing (want ">", ">=", "<" or "<=")`}, {"threshold", "missing"}}, ""},
		{"unknown metric, bad op", Alert{Metric: "x", Op: "=", Threshold: &two}, []alertProblem{{"metric", `unknown metric "x"`}, {"op", `"=" is not one of ">", ">=", "<", "<="`}}, "x"},
		{"bad severity", Alert{Metric: "diagnosis_rate", Op: ">", Threshold: &two, Severity: "a\nb"}, []alertProblem{{"severity", `"a\nb" holds the control or invisible character U+000A`}}, "diagnosis_rate"},
		{"negative minSamples", Alert{Metric: "diagnosis_rate", Op: ">", Threshold: &two, MinSamples: &neg}, []alertProblem{{"minSamples", "-1 is negative (want 0 or more)"}}, "diagnosis_rate"},
		{"NaN built in code", Alert{Metric: "diagnosis_rate", Op: ">", Threshold: f64(math.NaN())}, []alertProblem{{"threshold", "NaN is not a finite number (want e.g. 0.2)"}}, "diagnosis_rate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			al := tt.al
			got := checkAlert(&al, nil)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(alertProblem{})); diff != "" {
				t.Errorf("checkAlert() mismatch (-want +got):\n%s", diff)
			}
			if al.Name != tt.wantName {
				t.Errorf("name = %q, want %q", al.Name, tt.wantName)
			}
		})
	}
}
