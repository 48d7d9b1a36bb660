package results

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/report"
	"github.com/retrylab/retrylab/report/internal/golden"
	"github.com/retrylab/retrylab/retry/errreport"
	"github.com/retrylab/retrylab/trace"
)

// walkthrough2Summary runs scenarios/plandex-2-quota-exhausted.yaml (seed
// 001's walkthrough 2: a quota 429) with the built-in client, for real, and
// returns its summary with what varies from run to run fixed. The report
// in it is the one the client wrote into its trace.
func walkthrough2Summary(t *testing.T) *chaos.Summary {
	t.Helper()
	scs, err := scenario.LoadPaths([]string{filepath.Join("..", "..", "scenarios", "plandex-2-quota-exhausted.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	toxi, err := mock.StartToxiproxy(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toxi.Close() })
	r := &chaos.Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), Seed: 42, Confirm: 2}
	sum, err := r.Run(t.Context(), scs)
	if err != nil {
		t.Fatal(err)
	}
	res := &sum.Scenarios[0]
	if !res.Passed || len(res.ErrorReports) != 1 {
		t.Fatalf("%s: verdict %s, %d error reports, want a pass with one report; checks %+v", res.Name, res.Verdict, len(res.ErrorReports), res.Checks)
	}
	txt, err := os.ReadFile(filepath.Join(res.Dir, "report.txt"))
	if err != nil || !strings.Contains(string(txt), "UNRECOVERABLE ERROR") || !strings.Contains(string(txt), "Add credits to your account") {
		t.Errorf("report.txt in the run folder: %v\n%s", err, txt)
	}
	// What varies: times, durations, folders, ids.
	sum.RunDir, sum.DurationMs = "runs/2026-11-21T10-00-00Z", 5
	res.Dir, res.DurationMs, res.LatenessMs, res.File = "runs/2026-11-21T10-00-00Z/plandex-2-quota-exhausted", 5, 0, "scenarios/plandex-2-quota-exhausted.yaml"
	for i := range res.Checks {
		if res.Checks[i].Name == "maxDuration" {
			res.Checks[i].Got = "5ms"
		}
	}
	ev := &res.ErrorReports[0]
	ev.ID, ev.RequestID = "err-20261121T100000.000Z-1a2b3c4d", "req_1"
	for i := range ev.History {
		ev.History[i].Time = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	}
	return sum
}

// TestWalkthrough2Rendered: a scenario whose client gave up unrecoverably
// shows seed 001's boxed UNRECOVERABLE ERROR with its required actions in
// every output of chaos run: the table (colour only when asked), Markdown,
// JUnit's system-out, the JSON document (errorReports) and the HTML page.
// Goldens in testdata/walkthrough2/ (refresh with -update).
func TestWalkthrough2Rendered(t *testing.T) {
	sum := walkthrough2Summary(t)
	tests := []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"table", func(b *bytes.Buffer) error { return Table(b, sum) }},
		{"table-color", func(b *bytes.Buffer) error { return TableStyle(b, sum, errreport.Style{Width: 72, Color: true}) }},
		{"markdown", func(b *bytes.Buffer) error { return Markdown(b, sum) }},
		{"junit", func(b *bytes.Buffer) error { return JUnit(b, sum) }},
		{"json", func(b *bytes.Buffer) error { return JSON(b, sum) }},
		{"html", func(b *bytes.Buffer) error {
			var page bytes.Buffer
			if err := report.PageHTML(&page, report.Page{Runs: []*chaos.Summary{sum}}); err != nil {
				return err
			}
			b.WriteString(scenarioBlock(t, page.String()))
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.render(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			wants := []string{"UNRECOVERABLE ERROR", "Add credits to your account", "plandex providers switch"}
			if tt.name == "json" {
				// Structured: the tag, not the box's title.
				wants[0] = `"unrecoverable"`
			}
			for _, want := range wants {
				if !strings.Contains(out, want) {
					t.Errorf("%s output lacks %q", tt.name, want)
				}
			}
			if strings.Contains(out, "\x1b[") != (tt.name == "table-color") {
				t.Errorf("%s: ANSI colour present = %v, want it only when asked", tt.name, !(tt.name == "table-color"))
			}
			golden.Check(t, filepath.Join("walkthrough2", tt.name+".golden"), b.Bytes())
		})
	}
}

// scenarioBlock is the first scenario's block of an HTML page.
func scenarioBlock(t *testing.T, page string) string {
	t.Helper()
	i := strings.Index(page, `<div class="scenario`)
	j := strings.Index(page[max(i, 0):], "\n</div>")
	if i < 0 || j < 0 {
		t.Fatalf("no scenario block in the page")
	}
	return page[i:i+j] + "\n</div>\n"
}

// hostileReportSummary is a summary whose scenario carries an ErrorReport
// as anything could have written it (a summary.json read from disk is not
// cleaned by the runner): terminal escapes, a line rewritten by a carriage
// return, a bidirectional override, Markdown fences, HTML, XML-invalid
// characters, keys, a megabyte of message.
func hostileReportSummary() *chaos.Summary {
	bad := "\x1b[2J\x1b]0;owned\x07\rX\u202eevil\x00\x0b``````</details><script>alert(1)</script>]]>"
	ev := trace.ErrorReport{ID: bad, Category: "non-retryable", FailureType: "quota" + bad, Status: 429,
		Provider: "p" + bad, Model: "ghp_abcdefghijklmnopqrstuvwxyz0123", Message: "sk-ant-api03-SECRETSECRETSECRET " + bad + strings.Repeat("x", 1<<20),
		Reason: bad, Attempts: 1, Tags: []string{"unrecoverable"}, Step: map[string]string{"plan": bad, bad: bad},
		Actions: []trace.ReportAction{{Priority: "critical", Text: bad, Command: "export token=SECRETSECRETSECRET " + bad}},
		History: []trace.ReportAttempt{{Attempt: 1, FailureType: bad, Message: bad}}}
	s := &chaos.Summary{RunDir: "runs/x", Scenarios: []chaos.Result{{Name: "hostile", File: "h.yaml", Verdict: chaos.VerdictPass,
		Passed: true, Outcome: "failure", Attempts: 1, Dir: "runs/x/hostile", FailureTypes: []string{}, Checks: []verify.Check{},
		ErrorReports: []trace.ErrorReport{ev, ev}, ErrorReportsOmitted: 7}}}
	s.Finish()
	return s
}

// TestErrorReportHostileRendered: a report with hostile content reaches no
// output with a control or format character, a key, a broken fence or
// element, or more than a bounded size; JUnit still parses.
func TestErrorReportHostileRendered(t *testing.T) {
	t.Parallel()
	sum := hostileReportSummary()
	renders := map[string]func(*bytes.Buffer) error{
		"table":    func(b *bytes.Buffer) error { return Table(b, sum) },
		"markdown": func(b *bytes.Buffer) error { return Markdown(b, sum) },
		"junit":    func(b *bytes.Buffer) error { return JUnit(b, sum) },
		"html":     func(b *bytes.Buffer) error { return report.PageHTML(b, report.Page{Runs: []*chaos.Summary{sum}}) },
	}
	for name, render := range renders {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := render(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if !strings.Contains(out, "UNRECOVERABLE ERROR") {
				t.Errorf("no report in the %s output", name)
			}
			if len(out) > 256<<10 {
				t.Errorf("%s output is %d bytes, want it bounded", name, len(out))
			}
			for _, secret := range []string{"SECRETSECRET", "abcdefghijklmnopqrstuvwxyz0123"} {
				if strings.Contains(out, secret) {
					t.Errorf("%s output holds a key (%s)", name, secret)
				}
			}
			for _, r := range out {
				if (unicode.IsControl(r) && r != '\n' && r != '\t') || unicode.Is(unicode.Cf, r) {
					t.Fatalf("%s output holds %U", name, r)
				}
			}
			switch name {
			case "html":
				if strings.Contains(out, "<script>alert") || strings.Contains(out, "</details><script") {
					t.Errorf("HTML not escaped")
				}
			case "junit":
				if err := xml.Unmarshal(b.Bytes(), new(junitSuites)); err != nil {
					t.Errorf("JUnit does not parse: %v", err)
				}
			case "markdown":
				// The report's code block is fenced longer than any run of
				// backticks inside it: the fence that opens it closes it.
				re := regexp.MustCompile("(?m)^(`{3,})text$")
				m := re.FindStringSubmatch(out)
				if m == nil || len(m[1]) <= 6 || !strings.Contains(out, "\n"+m[1]+"\n") {
					t.Errorf("report block fence %q does not hold the report's backticks", m)
				}
			}
		})
	}
}

// TestTableSaysEachLineOnce: a run of many scenarios leaves no line twice
// in the terminal: a hint several checks share is said once, naming the
// other checks; a want, got or where line another check printed already
// names the check that printed it last; and one client's give-up is boxed
// (a failed scenario's first), the others a line each, so the box's frame
// is not repeated.
func TestTableSaysEachLineOnce(t *testing.T) {
	t.Parallel()
	base := walkthrough2Summary(t)
	rep := base.Scenarios[0].ErrorReports[0]
	noisy := "the noise measured around the wait is too large"
	check := func(scenario string) verify.Check {
		return verify.Check{Name: "delays.server", State: verify.StateInconclusive, Want: "1s", Got: scenario + " 1.3s",
			Where: "server.jsonl", Hint: noisy}
	}
	mk := func(name string, passed bool, reports ...trace.ErrorReport) chaos.Result {
		r := chaos.Result{Name: name, Passed: passed, Verdict: chaos.VerdictPass, Dir: "runs/x/" + name, ErrorReports: reports,
			Checks: []verify.Check{check(name)}}
		if !passed {
			r.Verdict = chaos.VerdictFail
		}
		return r
	}
	sum := &chaos.Summary{RunDir: "runs/x", Seed: 1, Scenarios: []chaos.Result{
		mk("a-gave-up", true, rep), mk("b-failed", false, rep), mk("c-gave-up", true, rep), mk("d", true)}}
	var buf bytes.Buffer
	if err := Table(&buf, sum); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	seen := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if seen[l] {
			t.Errorf("line printed twice: %q\n%s", l, out)
		}
		seen[l] = true
	}
	if n := strings.Count(out, "╔"); n != 1 {
		t.Errorf("%d boxes, want 1:\n%s", n, out)
	}
	if !strings.Contains(out, "b-failed: the client gave up (the full report:") {
		t.Errorf("the failed scenario's give-up is not the boxed one:\n%s", out)
	}
	for _, want := range []string{"a-gave-up: the client gave up: ", "c-gave-up: the client gave up: ",
		"  hint:  " + noisy, "  (the same hint for b-failed delays.server, c-gave-up delays.server, d delays.server)",
		"  want:  1s\n", "  want:  1s (as for a-gave-up delays.server)", "  want:  1s (as for c-gave-up delays.server)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
