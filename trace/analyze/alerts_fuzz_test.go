package analyze

import (
	"strings"
	"testing"
)

// FuzzParseAlert checks that --alert parsing never panics and that what it
// accepts is a known metric, a valid op and a finite threshold.
func FuzzParseAlert(f *testing.F) {
	for _, s := range []string{"provider_retry_rate>0.2", "diagnosis_rate >= 0.1", "a<b", ">", "avg_repair_iterations<=3e0", "x=1", "time_to_recovery_p50>30s", "time_to_recovery_p99<=1500ms", "recovered_rate<0.7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAlert(s)
		if err != nil {
			if !strings.Contains(err.Error(), "--alert") {
				t.Fatalf("error %q does not name the flag", err)
			}
			return
		}
		if !isMetric(a.Metric) || a.Threshold == nil || !strings.Contains(">=<=", a.Op) {
			t.Fatalf("ParseAlert(%q) = %+v", s, a)
		}
	})
}

// FuzzParseAlerts checks that alerts files never panic the parser and that
// accepted alerts are complete.
func FuzzParseAlerts(f *testing.F) {
	f.Add("alerts:\n  - metric: provider_retry_rate\n    op: \">\"\n    threshold: 0.2\n    minSamples: 20\n")
	f.Add("alerts: []\n")
	f.Add("alerts:\n  - name: x\n")
	f.Add("{alerts: [{metric: diagnosis_rate, op: '<', threshold: 1}]}")
	f.Fuzz(func(t *testing.T, s string) {
		alerts, err := ParseAlerts("a.yaml", []byte(s))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "a.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, a := range alerts {
			if !isMetric(a.Metric) || a.Threshold == nil || a.Name == "" {
				t.Fatalf("accepted incomplete alert %+v from %q", a, s)
			}
		}
	})
}
