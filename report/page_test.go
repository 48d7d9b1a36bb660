package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/report/internal/golden"
	"github.com/retrylab/retrylab/trace"
	"github.com/retrylab/retrylab/trace/analyze"
)

// pageOf renders the report of paths as `retrylab report html` does.
func pageOf(t *testing.T, paths ...string) string {
	t.Helper()
	runs, err := LoadRuns(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	files, err := trace.Discover(paths)
	if err != nil {
		t.Fatal(err)
	}
	an, err := analyze.Run(context.Background(), files, analyze.Options{
		By: []string{"provider", "model"}, Alerts: analyze.DefaultAlerts(), MinSamples: 1, Confidence: 0.95,
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	byDay, err := analyze.Run(context.Background(), files, analyze.Options{By: []string{"day"}, Alerts: []analyze.Alert{}, MinSamples: 1, Confidence: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	if err := PageHTML(&buf, Page{Analysis: an, ByDay: byDay, Runs: runs.Runs}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestPageGolden(t *testing.T) {
	t.Parallel()
	got := pageOf(t, filepath.Join("testdata", "page", "run"))
	golden.Check(t, "page.golden", []byte(got))
}

// TestPageTimelines checks what the golden shows, so that -update cannot
// bless a wrong page: one timeline per scenario, the waits of summary.json,
// the failed check in red with its want and got, the envelope shaded.
func TestPageTimelines(t *testing.T) {
	t.Parallel()
	page := pageOf(t, filepath.Join("testdata", "page", "run"))
	for _, want := range []string{
		`class="timeline" data-scenario="forgeflare-max-4-retries"`,
		`data-wait="4" data-observed-ms="801"`,
		`data-wait="4" data-client-ms="16000"`,
		`<rect class="wait client bad" data-wait="3" data-client-ms="5100"`,
		`<rect class="wait client" data-wait="2" data-client-ms="2066"`,
		`<title>policy allows [3.6s, 4.4s]</title>`,
		`✗ delays.client fail</b>: want [900ms, 1.1s], [1.8s, 2.2s], [3.6s, 4.4s], got 914ms, 2.066s, 5.1s`,
		`met: 429 retry-after=3`,
		`<summary>Passed or skipped: 3 scenarios</summary>`,
		`role="img"`,
		`<title id="retry-rate-per-group-by-day-t">Retry rate per day</title>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if n := strings.Count(page, `class="timeline"`); n != 4 {
		t.Errorf("%d timelines, want 4", n)
	}
	// forgeflare-max-4-retries made 5 attempts (its script lists a 6th).
	if strings.Contains(page, "attempt 6 met") {
		t.Error("draws an attempt that was never made")
	}
	// Every svg has a title and a desc.
	svgs := regexp.MustCompile(`(?s)<svg role="img".*?</svg>`).FindAllString(page, -1)
	if len(svgs) < 7 {
		t.Errorf("%d charts, want at least 7", len(svgs))
	}
	for _, s := range svgs {
		if !strings.Contains(s, "<title") || !strings.Contains(s, "<desc") {
			t.Errorf("svg without title or desc: %.200s", s)
		}
	}
}

func TestPageCapsAndEscapes(t *testing.T) {
	t.Parallel()
	s := &chaos.Summary{Schema: chaos.SummarySchema, RunDir: "runs/x"}
	for i := range 620 {
		s.Scenarios = append(s.Scenarios, chaos.Result{Name: fmt.Sprintf("fail-%03d", i), Verdict: chaos.VerdictFail,
			Attempts: 80, Faults: []string{"529"}, DelaysMs: chaos.DelaysMs{Server: []int64{10, 20}}})
	}
	s.Scenarios = append(s.Scenarios, chaos.Result{Name: `<script>alert(1)</script> sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789`,
		Passed: true, Verdict: chaos.VerdictPass, Attempts: 1, Faults: []string{"\x1b[31mred"},
		Checks:   []verify.Check{{Name: "outcome", Passed: true}},
		Findings: []verify.Finding{{Code: "stitched_answer", Attempts: []int{1, 2}, Evidence: `output "<img src=x onerror=alert(2)>" sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789`}}})
	s.Scenarios = append(s.Scenarios, chaos.Result{Name: "skipped-one", Verdict: chaos.VerdictSkipped, SkipReason: "needs node",
		Faults: []string{"529", "ok"}})
	var buf bytes.Buffer
	if err := PageHTML(&buf, Page{Runs: []*chaos.Summary{s}}); err != nil {
		t.Fatal(err)
	}
	page := strings.Replace(buf.String(), errorHook, "", 1)
	skipped := page[strings.Index(page, `data-scenario="skipped-one"`):]
	skipped = skipped[:strings.Index(skipped, "</div>")]
	if strings.Contains(skipped, "met:") || !strings.Contains(skipped, "needs node") {
		t.Errorf("a skipped scenario draws attempts or lacks its reason:\n%s", skipped)
	}
	if n := strings.Count(page, `class="timeline"`); n != pageMaxNotPassed+2 {
		t.Errorf("%d timelines drawn, want %d", n, pageMaxNotPassed+2)
	}
	for _, want := range []string{"120 more not drawn", "30 more attempts not drawn", "&lt;script&gt;", "sk-***",
		"<b>finding stitched_answer</b> (attempts 1, 2): output &#34;&lt;img src=x", "stitched_answer 1 (not failures"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "<img", "abcdefghijklmnopqrstuvwxyz0123456789", "\x1b"} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q", bad)
		}
	}
}

func TestParseEnvelopes(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	for _, tc := range []struct {
		in   string
		want [][2]time.Duration
		ok   bool
	}{
		{"[900ms, 1.1s], 4s, no retry", [][2]time.Duration{{900 * ms, 1100 * ms}, {4000 * ms, 4000 * ms}, {-1, -1}}, true},
		{"2s", [][2]time.Duration{{2000 * ms, 2000 * ms}}, true},
		{"waits inside the policy's envelope", nil, false},
		{"[2s, 1s]", nil, false},
		{"[2s]", nil, false},
		{"", nil, false},
	} {
		got, ok := parseEnvelopes(tc.in)
		if ok != tc.ok || (ok && !cmp.Equal(got, tc.want)) {
			t.Errorf("parseEnvelopes(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzParseEnvelopes(f *testing.F) {
	for _, s := range []string{"[900ms, 1.1s], 4s, no retry", "none", "[[1s, 2s]", "1s,,2s", "]1s["} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		es, ok := parseEnvelopes(s)
		if !ok {
			return
		}
		for _, e := range es {
			if e[0] > e[1] {
				t.Errorf("%q: envelope %v has lo > hi", s, e)
			}
		}
	})
}

func TestLoadRunsErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return filepath.Dir(p)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"bad/summary.json", "{\n\"schema\": \n}", "line 3: not valid JSON"},
		{"other/summary.json", `{"schema": "x"}`, `field "schema" is "x"`},
		{"types/summary.json", `{"schema": "retrylab.chaos/v1", "scenarios": 3}`, `field "scenarios"`},
		{"one/result.json", `{}`, `field "name" is missing`},
	} {
		_, err := LoadRuns(context.Background(), []string{write(tc.name, tc.body)})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s: error %v, want one naming the file and %q", tc.name, err, tc.want)
		}
	}
}

// FuzzPageSummary feeds a summary.json through decodeRunFile and PageHTML: no
// panic, and nothing from it becomes markup or a script.
func FuzzPageSummary(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "page", "run", "summary.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"schema":"retrylab.chaos/v1","scenarios":[{"name":"<script>x","attempts":-3,"timeScale":-1,"faults":["<b>"],"delaysMs":{"server":[-5,9223372036854775807],"client":[1]},"checks":[{"name":"delays.client","want":"[1s, 2s]","got":"<img>"}]}]}`))
	f.Add([]byte(`{"schema":"retrylab.chaos/v1","scenarios":[{"name":"r","errorReports":[{"category":"non-retryable","failureType":"<b>x","message":"<script>x","actions":[{"priority":"critical","text":"<img>","command":"</pre><script>"}],"history":[{"attempt":1,"failureType":"<script>"}]}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := decodeRunFile("summary.json", data)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := PageHTML(&buf, Page{Runs: []*chaos.Summary{run}}); err != nil {
			t.Fatal(err)
		}
		page := strings.Replace(buf.String(), errorHook, "", 1)
		for _, bad := range []string{"<script", "<img", "<b>x"} {
			if strings.Contains(page, bad) {
				t.Errorf("page holds %q", bad)
			}
		}
	})
}

// TestPageOutage: a scenario's outage on the page, in full — a row per
// phase and per draw, a draw past the last phase, the labels escaped and
// redacted — checked against a golden of the block.
func TestPageOutage(t *testing.T) {
	t.Parallel()
	s := &chaos.Summary{Schema: chaos.SummarySchema, RunDir: "runs/x", Scenarios: []chaos.Result{{
		Name: "flapping", Verdict: chaos.VerdictPass, Passed: true, Outcome: "success", Attempts: 3, TimeScale: 0.05,
		Faults: []string{"529", "drop after 400 bytes", "ok"}, DelaysMs: chaos.DelaysMs{Server: []int64{25, 50}},
		Checks: []verify.Check{{Name: "outcome", Passed: true, State: verify.StatePass}},
		Outage: &chaos.OutageResult{Seed: 7,
			Phases: []chaos.OutagePhase{
				{ForMs: 90000, Mix: []chaos.OutageMix{{Weight: 6, Fault: "529"}, {Weight: 1, Fault: "drop after 400 bytes"}, {Weight: 3, Fault: "ok"}}},
				{ForMs: 30000, Mix: []chaos.OutageMix{{Weight: 1, Fault: `ok "<img src=x> sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"`}}},
			},
			Draws: []chaos.OutageDraw{
				{Attempt: 1, AtMs: 0, Phase: 1, Entry: 1, Fault: "529"},
				{Attempt: 2, AtMs: 2043, Phase: 1, Entry: 2, Fault: "drop after 400 bytes"},
				{Attempt: 3, AtMs: 125000, Phase: 0, Entry: 0, Fault: "ok"},
			}},
	}}}
	var buf bytes.Buffer
	if err := PageHTML(&buf, Page{Runs: []*chaos.Summary{s}}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	i, j := strings.Index(page, `<details class="outage"`), strings.Index(page, "</details>")
	if i < 0 || j < i {
		t.Fatalf("no outage block on the page")
	}
	block := page[i : j+len("</details>")]
	for _, bad := range []string{"<img", "abcdefghijklmnopqrstuvwxyz0123456789"} {
		if strings.Contains(block, bad) {
			t.Errorf("the outage block holds %q", bad)
		}
	}
	golden.Check(t, "page_outage.golden", []byte(block+"\n"))
}
