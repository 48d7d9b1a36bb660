package analyze

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"github.com/retrylab/retrylab/trace"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestAnalyzeHandChecked computes every field of the analysis on a small
// corpus whose figures were worked out by hand (see the comments).
func TestAnalyzeHandChecked(t *testing.T) {
	t.Parallel()
	files, err := trace.Discover([]string{"../testdata/corpus"})
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{
		filepath.FromSlash("../testdata/corpus/run1/server.jsonl"),
		filepath.FromSlash("../testdata/corpus/run1/trace.jsonl"),
		filepath.FromSlash("../testdata/corpus/run2/trace.jsonl"),
		filepath.FromSlash("../testdata/corpus/run3.jsonl.gz"),
	}
	if diff := cmp.Diff(wantFiles, files); diff != "" {
		t.Fatalf("Discover() mismatch (-want +got):\n%s", diff)
	}
	var malformed []*trace.LineError
	got, err := Run(context.Background(), files, Options{
		Alerts:     DefaultAlerts(),
		MinSamples: 1,
		Workers:    3,
		Malformed:  func(le *trace.LineError) { malformed = append(malformed, le) },
	})
	if err != nil {
		t.Fatal(err)
	}
	by := []string{"provider", "model"}
	want := &Analysis{
		Schema: Schema,
		// run1/trace 13 + server 3 (not a run: journal only, no runId) +
		// run2 12 (one blank, one malformed) + run3 4.
		Inputs: Inputs{Files: 4, Runs: 3, Events: 32, MalformedLines: 1, UnknownTypes: map[string]int{"Foo": 2}},
		// durations 100, 3500, 9000, 2000: nearest rank p50 = 2nd = 2000.
		Requests: Requests{Total: 4, Succeeded: 3, Failed: 1, WithRetries: 3, Retries: 6,
			RetryRate: 0.75, FailureRate: 0.25, RecoveredRate: 2.0 / 3, Amplification: 2.5,
			DurationMs: Quantiles{P50: 2000, P90: 9000, P99: 9000, Max: 9000}},
		// willRetry delays 1000 2000 500 1000 2000 1500.
		Attempts: Attempts{Failed: 7,
			ByFailureType: map[string]int64{"rate_limit": 1, "overloaded": 1, "server_error": 4, "timeout": 1},
			ByStatus:      map[string]int64{"429": 1, "529": 1, "503": 4},
			DelayMs:       Delays{Count: 6, Total: 8000, P50: 1000, P90: 2000, P99: 2000, Max: 2000}},
		Escalations: Escalations{Total: 3, Runs: 2, Rate: 2.0 / 3,
			ByPath: []EscalationPath{
				{From: "L2", To: "L3", Count: 1},
				{From: "claude-haiku", To: "claude-sonnet", Count: 1},
				{From: "claude-sonnet", To: "claude-opus", Count: 1},
			},
			ByReason: map[string]int64{"auto_after_retries": 1, "non_improving": 1, "error_fallback": 1}},
		Groups: []Group{
			{Keys: map[string]string{"provider": "anthropic", "model": "claude-haiku"}, Total: 2, Succeeded: 2,
				WithRetries: 1, Retries: 2, RetryRate: 0.5, RecoveredRate: 1, by: by},
			{Keys: map[string]string{"provider": "anthropic", "model": "claude-sonnet"}, Total: 1, Succeeded: 1,
				WithRetries: 1, Retries: 1, RetryRate: 1, RecoveredRate: 1, by: by},
			{Keys: map[string]string{"provider": "openai", "model": "gpt-4o"}, Total: 1, Failed: 1,
				WithRetries: 1, Retries: 3, RetryRate: 1, FailureRate: 1, by: by},
		},
		// L2 runs: r1 (escalated from L2) and run2; repair maxima 2 and 4.
		Metrics: Metrics{ProviderRetryRate: 0.75, ProviderFailureRate: 0.25, EscalationRate: 2.0 / 3,
			L2EscalationRate: 0.5, AvgRepairIterations: 3, DiagnosisRate: 0.2},
		Alerts: []AlertResult{
			{Name: "provider_retry_rate", Metric: "provider_retry_rate", Op: ">", Threshold: 0.2, Value: 0.75, Samples: 4,
				Lower: 0.24860462573018155, Upper: 0.9872585449014338, State: StateFiring},
			{Name: "l2_escalation_rate", Metric: "l2_escalation_rate", Op: ">", Threshold: 0.3, Value: 0.5, Samples: 2,
				Lower: 0.025320565519103628, Upper: 0.9746794344808963, State: StateWarning},
			{Name: "avg_repair_iterations", Metric: "avg_repair_iterations", Op: ">", Threshold: 3, Value: 3, Samples: 2,
				Lower: 3, Upper: 3, State: StateOK},
			{Name: "diagnosis_rate", Metric: "diagnosis_rate", Op: ">", Threshold: 0.1, Value: 0.2, Samples: 5,
				Lower: 0.01020621831301151, Upper: 0.6574083180011386, State: StateWarning},
		},
		Counts: Counts{EscalatedRuns: 2, L2Runs: 2, L2EscalatedRuns: 1, RepairRuns: 2, RepairIterations: 6,
			DiagnosisStarted: 1, StepFinished: 5, Recovered: 2},
		Confidence:   DefaultConfidence,
		By:           by,
		DelayHist:    Histogram{Counts: [11]int64{2: 1, 3: 2, 4: 3}, SumMs: 8000},
		DurationHist: Histogram{Counts: [11]int64{0: 1, 4: 1, 5: 1, 7: 1}, SumMs: 14600},
	}
	// The issue 9 figures are checked by TestAnalyzeIssue9HandChecked.
	opts := []cmp.Option{cmp.AllowUnexported(Group{}), cmpopts.EquateApprox(0, 1e-9),
		cmpopts.IgnoreFields(Analysis{}, "Orchestrator", "Recovery", "Tickets", "RetryCore", "ErrorMessages", "TicketDelayHist"),
		cmpopts.IgnoreFields(Requests{}, "RetriesPerRequest"),
		cmpopts.IgnoreFields(Metrics{}, "JudgeInvocationRate", "CandidateValidityRate", "VerificationPassRate", "RecoveredRate",
			"TimeToRecoveryMean", "TimeToRecoveryP50", "TimeToRecoveryP90", "TimeToRecoveryP99", "RetrySuccessRate", "TicketExhaustedRate")}
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		t.Errorf("Run() mismatch (-want +got):\n%s", diff)
	}
	wantMal := []*trace.LineError{{File: filepath.FromSlash("../testdata/corpus/run2/trace.jsonl"), Line: 4, Reason: "not a JSON object"}}
	if diff := cmp.Diff(wantMal, malformed); diff != "" {
		t.Errorf("malformed lines mismatch (-want +got):\n%s", diff)
	}
}

func TestAnalyzeStrict(t *testing.T) {
	t.Parallel()
	_, err := Run(context.Background(), []string{"../testdata/corpus/run1/trace.jsonl", "../testdata/corpus/run2/trace.jsonl"}, Options{Strict: true})
	var le *trace.LineError
	if !errors.As(err, &le) || le.Line != 4 {
		t.Fatalf("Run(strict) error = %v, want a *LineError at line 4", err)
	}
}

func TestAnalyzeGroupings(t *testing.T) {
	t.Parallel()
	files, _ := trace.Discover([]string{"../testdata/corpus"})
	tests := []struct {
		name string
		by   []string
		want []map[string]string
	}{
		{"failureType", []string{"failureType"}, []map[string]string{{"failureType": "none"}, {"failureType": "server_error"}}},
		{"run", []string{"run"}, []map[string]string{{"run": filepath.FromSlash("../testdata/corpus/run2/trace.jsonl")}, {"run": "r1"}, {"run": "r3"}}},
		{"day", []string{"day", "provider"}, []map[string]string{{"day": "2026-11-21", "provider": "anthropic"}, {"day": "2026-11-21", "provider": "openai"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			an, err := Run(context.Background(), files, Options{By: tt.by})
			if err != nil {
				t.Fatal(err)
			}
			var got []map[string]string
			for _, g := range an.Groups {
				got = append(got, g.Keys)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("groups mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := Run(context.Background(), files, Options{By: []string{"colour"}}); err == nil {
		t.Error("unknown grouping: want an error")
	}
}

func TestEvaluateAlerts(t *testing.T) {
	t.Parallel()
	an := &Analysis{Confidence: DefaultConfidence}
	an.Requests.Total = 100
	tests := []struct {
		name  string
		rate  float64
		total int64
		op    string
		thr   float64
		min   int
		want  string
	}{
		{"ok below", 0.10, 100, ">", 0.2, 1, StateOK},
		{"warning: point above, interval straddles", 0.22, 100, ">", 0.2, 1, StateWarning},
		{"firing: lower bound above", 0.40, 100, ">", 0.2, 1, StateFiring},
		{"insufficient data", 0.90, 5, ">", 0.2, 20, StateInsufficientData},
		{"no samples at all", 0, 0, ">", 0.2, 0, StateInsufficientData},
		{"less-than firing on upper bound", 0.01, 1000, "<", 0.05, 1, StateFiring},
		{"less-than warning", 0.04, 100, "<", 0.05, 1, StateWarning},
		{"equal is not greater", 0.2, 100, ">", 0.2, 1, StateOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			an.Requests.Total = tt.total
			an.Metrics.ProviderRetryRate = tt.rate
			thr := tt.thr
			got, err := EvaluateAlerts(an, []Alert{{Name: "a", Metric: "provider_retry_rate", Op: tt.op, Threshold: &thr}}, tt.min)
			if err != nil {
				t.Fatal(err)
			}
			if got[0].State != tt.want {
				t.Errorf("state = %s, want %s (lower %v upper %v)", got[0].State, tt.want, got[0].Lower, got[0].Upper)
			}
		})
	}
}

func TestParseAlert(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		in      string
		want    Alert
		wantErr bool
	}{
		{in: "provider_retry_rate>0.2", want: Alert{Name: "provider_retry_rate", Metric: "provider_retry_rate", Op: ">", Threshold: f(0.2)}},
		{in: "diagnosis_rate >= 0.1", want: Alert{Name: "diagnosis_rate", Metric: "diagnosis_rate", Op: ">=", Threshold: f(0.1)}},
		{in: "avg_repair_iterations<=3", want: Alert{Name: "avg_repair_iterations", Metric: "avg_repair_iterations", Op: "<=", Threshold: f(3)}},
		{in: "provider_retry_rate=0.2", wantErr: true},
		{in: "nope>1", wantErr: true},
		{in: ">1", wantErr: true},
		{in: "provider_retry_rate>abc", wantErr: true},
		// Issue 9: every registry metric, durations in seconds or with a unit.
		{in: "judge_invocation_rate>0.1", want: Alert{Name: "judge_invocation_rate", Metric: "judge_invocation_rate", Op: ">", Threshold: f(0.1)}},
		{in: "time_to_recovery_mean>30", want: Alert{Name: "time_to_recovery_mean", Metric: "time_to_recovery_mean", Op: ">", Threshold: f(30)}},
		{in: "time_to_recovery_p50>30s", want: Alert{Name: "time_to_recovery_p50", Metric: "time_to_recovery_p50", Op: ">", Threshold: f(30)}},
		{in: "time_to_recovery_p90>=1500ms", want: Alert{Name: "time_to_recovery_p90", Metric: "time_to_recovery_p90", Op: ">=", Threshold: f(1.5)}},
		{in: "recovered_rate<0.7", want: Alert{Name: "recovered_rate", Metric: "recovered_rate", Op: "<", Threshold: f(0.7)}},
		{in: "recovered_rate<70%", wantErr: true},
		{in: "retry_success_rate>30s", wantErr: true}, // a unit only for durations
		{in: "time_to_recovery_p50>ms", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseAlert(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseAlert(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); !tt.wantErr && diff != "" {
				t.Errorf("ParseAlert() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseAlerts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, wantErr string
	}{
		{"ok", "alerts:\n  - metric: provider_retry_rate\n    op: \">\"\n    threshold: 0.2\n    minSamples: 20\n    severity: page\n", ""},
		{"unknown field", "alerts:\n  - metric: provider_retry_rate\n    op: \">\"\n    threshold: 0.2\n    colour: red\n", `a.yaml:5: alerts[0].colour: unknown field "colour"`},
		{"threshold not a number", "alerts:\n  - metric: provider_retry_rate\n    op: \">\"\n    threshold: abc\n", "a.yaml:4: alerts[0].threshold: `abc` is not a number"},
		// Regression: an explicit empty list was an error, so a file could not turn the defaults off.
		{"empty list turns alerts off", "alerts: []\n", ""},
		{"no alerts key", "other: 1\n", "a.yaml:1: unknown field \"other\""},
		{"unknown metric", "alerts:\n  - metric: retry_rate\n    op: \">\"\n    threshold: 0.2\n", `a.yaml:2: alerts[0].metric: unknown metric "retry_rate"`},
		{"bad op", "alerts:\n  - metric: diagnosis_rate\n    op: \"=\"\n    threshold: 0.2\n", `a.yaml:3: alerts[0].op: "=" is not one of ">", ">=", "<", "<="`},
		{"no threshold", "alerts:\n  - metric: diagnosis_rate\n    op: \">\"\n", "a.yaml:2: alerts[0].threshold: missing"},
		{"bad yaml", "alerts: [\n", "a.yaml:1: did not find expected node content"},
		{"empty", "", "a.yaml: alerts: empty alerts file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseAlerts("a.yaml", []byte(tt.in))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("ParseAlerts() error = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

// TestAnalyzeChunked checks that a large file split into chunks gives the
// same analysis, and the same malformed line numbers, as one reader.
func TestAnalyzeChunked(t *testing.T) {
	old := chunkMin
	chunkMin = 4096
	t.Cleanup(func() { chunkMin = old })
	path := filepath.Join(t.TempDir(), "big.jsonl")
	var b strings.Builder
	for i := range 3000 {
		switch {
		case i%997 == 0:
			b.WriteString("garbage line\n")
		case i%500 == 0:
			b.WriteString("\r\n")
		case i%3 == 0:
			fmt.Fprintf(&b, `{"type":"RetryAttempt","runId":"r%d","payload":{"model":"m%d","failureType":"overloaded","status":529,"willRetry":true,"delayMs":%d,"errorMessage":"boom %d %c"}}`+"\n", i%7, i%5, i, i, 'a'+i%17)
		case i%5 == 1: // issue 9: ticket decisions whose last one is decided across chunks, ties included
			fmt.Fprintf(&b, `{"type":"RetryDecision","runId":"r%d","payload":{"ticketId":"t%d","category":"c%d","currentAttempt":%d,"shouldRetry":%t,"nextDelayMs":%d}}`+"\n", i%7, i%13, i%3, i%4, i%2 == 0, i)
		case i%7 == 2:
			fmt.Fprintf(&b, `{"type":"TicketTransition","payload":{"ticketId":"t%d","event":"succeed","to":"needs_review"}}`+"\n", i%17)
		default:
			fmt.Fprintf(&b, `{"type":"ProviderRequestFinished","payload":{"provider":"p","model":"m%d","durationMs":%d,"success":%t,"retries":%d}}`+"\n", i%3, i, i%11 != 0, i%4)
		}
	}
	b.WriteString(`{"type":"RunFinished","payl`) // truncated last line
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	analyze := func(workers int) (*Analysis, []*trace.LineError) {
		var mal []*trace.LineError
		an, err := Run(context.Background(), []string{path}, Options{Workers: workers, Malformed: func(le *trace.LineError) { mal = append(mal, le) }})
		if err != nil {
			t.Fatal(err)
		}
		return an, mal
	}
	if tasks, _ := planChunks([]string{path}, 4); len(tasks) < 4 {
		t.Fatalf("planChunks made %d chunks, want several", len(tasks))
	}
	want, wantMal := analyze(1)
	got, gotMal := analyze(4)
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Group{})); diff != "" {
		t.Errorf("chunked analysis mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantMal, gotMal); diff != "" {
		t.Errorf("chunked malformed lines mismatch (-want +got):\n%s", diff)
	}
	if len(wantMal) != 5 || wantMal[4].Line != 3001 {
		t.Errorf("malformed = %v, want 5 with the last at line 3001", wantMal)
	}
	_, err := Run(context.Background(), []string{path}, Options{Workers: 4, Strict: true})
	var le *trace.LineError
	if !errors.As(err, &le) || le.Line != 1 {
		t.Errorf("strict chunked error = %v, want line 1", err)
	}
}

// TestAnalyzeKeyOrder checks that payload fields are read whatever the
// order of the keys, and that a malformed line leaves nothing behind.
func TestAnalyzeKeyOrder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "t.jsonl")
	data := `{"payload":{"provider":"a","success":true,"retries":2,"durationMs":7},"type":"ProviderRequestFinished"}
{"type":"ProviderRequestFinished","payload":{"provider":"a","success":true,"retries":5,"durationMs":9}} trailing
{"type":"ProviderRequestFinished","payload":{"provider":"b","success":false}}
`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	an, err := Run(context.Background(), []string{path}, Options{By: []string{"provider"}})
	if err != nil {
		t.Fatal(err)
	}
	want := Requests{Total: 2, Succeeded: 1, Failed: 1, WithRetries: 1, Retries: 2, RetryRate: 0.5, FailureRate: 0.5,
		RecoveredRate: 1, Amplification: 2, DurationMs: Quantiles{P50: 0, P90: 7, P99: 7, Max: 7},
		RetriesPerRequest: []Bucket{{"0", 1}, {"1", 0}, {"2", 1}, {"3", 0}, {"4", 0}, {"5", 0}, {"6", 0}, {"7", 0}, {"8", 0}, {"9", 0}, {"10+", 0}}}
	if diff := cmp.Diff(want, an.Requests); diff != "" {
		t.Errorf("Requests mismatch (-want +got):\n%s", diff)
	}
	if an.Inputs.MalformedLines != 1 || len(an.Groups) != 2 || an.Groups[1].Retries != 0 {
		t.Errorf("malformed %d, groups %+v", an.Inputs.MalformedLines, an.Groups)
	}
}

// TestAnalyzeHugeValues is a regression test: totals wrapped round to
// negative numbers past 2^63, and a value beyond int64 (1e20) was read as
// math.MinInt64, so it counted as 0.
func TestAnalyzeHugeValues(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "t.jsonl")
	const big = 1 << 62
	data := fmt.Sprintf(`{"type":"RetryAttempt","payload":{"willRetry":true,"delayMs":%d}}
{"type":"RetryAttempt","payload":{"willRetry":true,"delayMs":%d}}
{"type":"RetryAttempt","payload":{"willRetry":true,"delayMs":1e20}}
{"type":"RetryAttempt","payload":{"willRetry":true,"delayMs":"NaN"}}
{"type":"ProviderRequestFinished","payload":{"success":true,"retries":%d,"durationMs":1e300}}
{"type":"ProviderRequestFinished","payload":{"success":true,"retries":%d,"durationMs":-1e300}}
`, big, big, big, big)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 4} {
		an, err := Run(context.Background(), []string{path}, Options{Workers: workers, By: []string{"provider"}})
		if err != nil {
			t.Fatal(err)
		}
		wantDelay := Delays{Count: 4, Total: math.MaxInt64, P50: big, P90: math.MaxInt64, P99: math.MaxInt64, Max: math.MaxInt64}
		if diff := cmp.Diff(wantDelay, an.Attempts.DelayMs); diff != "" {
			t.Errorf("workers=%d: DelayMs mismatch (-want +got):\n%s", workers, diff)
		}
		if an.Requests.Retries != math.MaxInt64 || an.Groups[0].Retries != math.MaxInt64 {
			t.Errorf("workers=%d: retries = %d, group %d; want them saturated at MaxInt64", workers, an.Requests.Retries, an.Groups[0].Retries)
		}
		if an.Requests.DurationMs.Max != math.MaxInt64 || an.Requests.Amplification < 1 {
			t.Errorf("workers=%d: duration max %d, amplification %v", workers, an.Requests.DurationMs.Max, an.Requests.Amplification)
		}
	}
}

// TestAnalyzeMalformedCapPerFile is a regression test: the cap of 100
// reported malformed lines applied to each chunk of a split file, so a big
// file listed up to 100 lines per chunk.
func TestAnalyzeMalformedCapPerFile(t *testing.T) {
	old := chunkMin
	chunkMin = 4096
	t.Cleanup(func() { chunkMin = old })
	path := filepath.Join(t.TempDir(), "big.jsonl")
	var b strings.Builder
	for i := range 2000 {
		if i%5 == 0 {
			b.WriteString("garbage\n") // 400 malformed lines, spread over every chunk
			continue
		}
		fmt.Fprintf(&b, `{"type":"ProviderRequestFinished","payload":{"provider":"p","model":"m","durationMs":%d,"success":true,"retries":0}}`+"\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if tasks, _ := planChunks([]string{path}, 4); len(tasks) < 5 {
		t.Fatalf("planChunks made %d chunks, want more than 4 so that each holds under 100 malformed lines", len(tasks))
	}
	for _, workers := range []int{1, 4} {
		var got []string
		an, err := Run(context.Background(), []string{path}, Options{Workers: workers, Malformed: func(le *trace.LineError) { got = append(got, le.Error()) }})
		if err != nil {
			t.Fatal(err)
		}
		if an.Inputs.MalformedLines != 400 {
			t.Errorf("workers=%d: malformedLines = %d, want 400", workers, an.Inputs.MalformedLines)
		}
		var want []string
		for i := range 100 {
			want = append(want, fmt.Sprintf("%s:%d: not a JSON object", path, 5*i+1))
		}
		want = append(want, fmt.Sprintf("%s:496: and 300 more malformed lines after this one", path))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("workers=%d: reported lines mismatch (-want +got):\n%s", workers, diff)
		}
	}
}

// TestAnalyzeReadErrors is a regression test: a truncated .jsonl.gz said
// "cannot read: unexpected EOF", and the hint told the user to check that
// the file exists and is readable.
func TestAnalyzeReadErrors(t *testing.T) {
	t.Parallel()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for i := range 2000 {
		fmt.Fprintf(zw, `{"type":"ProviderRequestFinished","payload":{"durationMs":%d,"success":true,"retries":0}}`+"\n", i)
	}
	zw.Close()
	full := gz.Bytes()
	badSum := bytes.Clone(full)
	badSum[len(badSum)-8] ^= 0xff // the CRC-32 in the trailer
	tests := []struct {
		name, reason, hint string
		data               []byte
	}{
		{"cut in the data", "cannot read: the gzip stream is cut short (unexpected EOF): the file is truncated", "re-copy the file", full[:len(full)/2]},
		{"cut in the trailer", "cannot read: the gzip stream is cut short (unexpected EOF): the file is truncated", "re-copy the file", full[:len(full)-3]},
		{"cut in the header", "cannot read: the gzip stream is cut short (unexpected EOF): the file is truncated", "re-copy the file", full[:5]},
		{"bad checksum", "cannot read: corrupt gzip data (gzip: invalid checksum)", "re-copy the file", badSum},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trace.jsonl.gz")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Run(context.Background(), []string{path}, Options{Workers: 2})
			var pe *trace.PathError
			if !errors.As(err, &pe) {
				t.Fatalf("Run() error = %v, want a *PathError", err)
			}
			if got, want := pe.Error(), path+": "+tt.reason; got != want {
				t.Errorf("Error() = %q, want %q", got, want)
			}
			if !strings.HasPrefix(pe.Hint(), tt.hint) {
				t.Errorf("Hint() = %q, want it to start with %q", pe.Hint(), tt.hint)
			}
		})
	}
}
