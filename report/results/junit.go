package results

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/report"
	"github.com/retrylab/retrylab/retry/errreport"
)

// junitSuites follows the Ant JUnit schema that CI systems read.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnit renders a chaos run as Ant JUnit XML: one testsuite per
// scenario file, one testcase per check, a failure element carrying want,
// got and where, and the scenario's faults and settings as properties.
func JUnit(w io.Writer, s *chaos.Summary) error {
	out := junitSuites{Name: "retrylab chaos", Time: secs(s.DurationMs)}
	for _, r := range s.Scenarios {
		su := junitSuiteOf(r)
		out.Tests += su.Tests
		out.Failures += su.Failures
		out.Errors += su.Errors
		out.Skipped += su.Skipped
		out.Suites = append(out.Suites, su)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitSuiteOf is one scenario's suite: its properties, one case per
// check, an error case for an error of the run, or one skipped case.
func junitSuiteOf(r chaos.Result) junitSuite {
	su := junitSuite{Name: r.File, Time: secs(r.DurationMs)}
	if su.Name == "" {
		su.Name = r.Name
	}
	su.Properties = append(su.Properties,
		junitProperty{"scenario", r.Name},
		junitProperty{"client", r.Client},
		junitProperty{"seed", fmt.Sprint(r.Seed)},
		junitProperty{"timeScale", fmt.Sprint(r.TimeScale)},
		junitProperty{"runDir", r.Dir},
		junitProperty{"verdict", r.Verdict})
	if r.PassedOnRerun {
		su.Properties = append(su.Properties, junitProperty{"passedOnRerun", fmt.Sprint(len(r.Reruns) + 1)})
	}
	su.Properties = append(su.Properties, fleetProperties(r.Fleet)...)
	class := "chaos." + r.Name
	if r.Verdict == chaos.VerdictSkipped || r.Verdict == chaos.VerdictInterrupted {
		// An interrupted scenario has no verdict: it is neither a failure
		// nor an error of the client, but a case not run to its end.
		msg, tm := r.SkipReason, "0"
		if r.Verdict == chaos.VerdictInterrupted {
			msg, tm = "interrupted: "+r.Interrupted, secs(r.DurationMs)
		}
		su.Tests++
		su.Skipped++
		su.Cases = append(su.Cases, junitCase{Name: "run", Classname: class, Time: tm, Skipped: &junitSkipped{Message: msg}})
		return su
	}
	for i, f := range r.Faults {
		su.Properties = append(su.Properties, junitProperty{fmt.Sprintf("attempt.%d", i+1), f})
	}
	if len(r.ErrorReports) > 0 {
		// What the client reported when it gave up, as a person would
		// have seen it.
		su.SystemOut = report.ReportsText(r, errreport.Style{Width: report.ReportWidth}, false)
	}
	junitOutage(&su, r)
	junitFindings(&su, r)
	if r.Error != "" {
		su.Tests++
		su.Errors++
		su.Cases = append(su.Cases, junitCase{Name: "run", Classname: class, Time: secs(r.DurationMs),
			Error: &junitFailure{Message: r.Error, Type: "error", Text: r.Error}})
	}
	for _, c := range r.Checks {
		su.Tests++
		tc := junitCheckCase(r, c, class)
		if tc.Skipped != nil {
			su.Skipped++
		}
		if tc.Failure != nil {
			su.Failures++
		}
		su.Cases = append(su.Cases, tc)
	}
	if len(r.Checks) == 0 && r.Error == "" {
		su.Tests++
		su.Cases = append(su.Cases, junitCase{Name: "run", Classname: class, Time: secs(r.DurationMs)})
	}
	return su
}

// junitCheckCase is one check's case: passed, skipped (unverified), a note
// (a timing check that failed on the first run and passed on a re-run) or
// a failure (inconclusive ones typed so).
func junitCheckCase(r chaos.Result, c verify.Check, class string) junitCase {
	tc := junitCase{Name: c.Name, Classname: class, Time: "0"}
	text := strings.Join([]string{"want:  " + c.Want, "got:   " + c.Got, "where: " + c.Where}, "\n")
	if c.Hint != "" {
		text += "\nhint:  " + c.Hint
	}
	switch {
	case c.Passed:
	case c.State == verify.StateUnverified:
		tc.Skipped = &junitSkipped{Message: "unverified: " + c.Got}
	case r.PassedOnRerun:
		tc.SystemOut = fmt.Sprintf("run 1: %s %s; passed on run %d\n%s", c.Name, c.State, len(r.Reruns)+1, text)
	default:
		msg := fmt.Sprintf("want %s, got %s", c.Want, c.Got)
		typ := c.Name
		if c.State == verify.StateInconclusive {
			msg, typ = "inconclusive: "+msg, "inconclusive"
		}
		tc.Failure = &junitFailure{Message: msg, Type: typ, Text: text}
	}
	return tc
}

func secs(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }
