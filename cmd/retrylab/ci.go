package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/verify"
	"github.com/retrylab/retrylab/report"
)

// maxStepSummary is GitHub's limit on a step's summary file (1 MiB); what
// retrylab appends is cut to fit what the file already holds.
const maxStepSummary = 1 << 20

// summaryCutNote ends a summary that was cut to fit.
const summaryCutNote = "\n\n> **Note:** this summary was cut to fit GitHub's 1 MiB step-summary limit; the full report is in the command's output and the run folder.\n"

// appendStepSummary appends the Markdown that render writes to the file
// named by $GITHUB_STEP_SUMMARY, when set: appended, never truncated, and
// cut (with a note) so that the file stays within 1 MiB. A failure is a
// warning on stderr; it never changes the command's verdict.
func appendStepSummary(stderr io.Writer, render func(io.Writer) error) {
	path := os.Getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return
	}
	warn := func(err error) {
		fmt.Fprintf(stderr, "warning: could not append to $GITHUB_STEP_SUMMARY (%s): %s\n", printable(path), printable(err.Error()))
	}
	var b bytes.Buffer
	if err := render(&b); err != nil {
		warn(err)
		return
	}
	// A FIFO or a device would block or take anything: only a regular
	// file (or none yet) is written.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		warn(fmt.Errorf("not a regular file"))
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		warn(err)
		return
	}
	var have int64
	if st, err := f.Stat(); err == nil {
		if !st.Mode().IsRegular() {
			f.Close()
			warn(fmt.Errorf("not a regular file"))
			return
		}
		have = st.Size()
	}
	data := fitSummary(b.Bytes(), maxStepSummary-have)
	if len(data) == 0 {
		f.Close()
		fmt.Fprintf(stderr, "warning: $GITHUB_STEP_SUMMARY already holds %d bytes of GitHub's 1 MiB: retrylab's summary is not appended\n", have)
		return
	}
	if have > 0 {
		data = append([]byte("\n"), data...)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		warn(err)
	}
}

// fitSummary returns md cut to at most room bytes, at a line boundary and
// with summaryCutNote when cut; nothing when even the note does not fit.
func fitSummary(md []byte, room int64) []byte {
	room-- // the separating newline
	if int64(len(md)) <= room {
		return md
	}
	keep := room - int64(len(summaryCutNote))
	if keep < 0 {
		return nil
	}
	cut := md[:keep]
	if i := bytes.LastIndexByte(cut, '\n'); i >= 0 {
		cut = cut[:i]
	}
	for len(cut) > 0 && !utf8.Valid(cut) { // never split a character
		cut = cut[:len(cut)-1]
	}
	if bytes.Count(cut, []byte("<details")) > bytes.Count(cut, []byte("</details>")) {
		cut = append(cut, "\n\n</details>"...)
		if int64(len(cut)+len(summaryCutNote)) > room {
			cut = cut[:0]
		}
	}
	return append(cut, summaryCutNote...)
}

// githubActions reports whether annotations are printed.
func githubActions() bool { return os.Getenv("GITHUB_ACTIONS") == "true" }

// annotationData escapes a workflow command's message.
var annotationData = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")

// annotationProp escapes a workflow command's property value.
var annotationProp = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")

// annotationEsc redacts keys, escapes per the workflow-command rules,
// then makes any other control character visible.
func annotationEsc(r *strings.Replacer, s string) string {
	return report.Visible(r.Replace(report.RedactLabel(s)))
}

// maxAnnotations bounds the annotations of one run (GitHub shows at most
// 10 errors per step anyway); the rest are counted in one last line.
const maxAnnotations = 50

// writeAnnotations prints a GitHub workflow command per check that did not
// pass: ::error for a failed check (and a scenario that could not run),
// ::warning for an inconclusive one; file is the scenario file and line the
// YAML line of the expectation the check verifies.
func writeAnnotations(w io.Writer, sum *chaos.Summary) {
	n, rest := 0, 0
	emit := func(level, file string, line int, title, msg string) {
		if n >= maxAnnotations {
			rest++
			return
		}
		n++
		props := "file=" + annotationEsc(annotationProp, file)
		if line > 0 {
			props += fmt.Sprintf(",line=%d", line)
		}
		props += ",title=" + annotationEsc(annotationProp, title)
		fmt.Fprintf(w, "::%s %s::%s\n", level, props, annotationEsc(annotationData, msg))
	}
	for _, r := range sum.Scenarios {
		if r.Verdict == chaos.VerdictError {
			emit("error", r.File, 0, "retrylab: "+r.Name+" could not run", r.Error)
			continue
		}
		if r.PassedOnRerun {
			continue
		}
		for _, c := range r.NotPassedChecks() {
			level := "error"
			switch c.State {
			case verify.StateFail:
			case verify.StateInconclusive:
				level = "warning"
			default:
				continue
			}
			msg := fmt.Sprintf("%s %s: want %s, got %s", c.Name, c.State, c.Want, c.Got)
			if c.Where != "" {
				msg += " (" + c.Where + ")"
			}
			if c.Hint != "" {
				msg += "; hint: " + c.Hint
			}
			emit(level, r.File, c.Line, "retrylab: "+r.Name+": "+c.Name, msg)
		}
	}
	if rest > 0 {
		fmt.Fprintf(w, "::error title=retrylab::%d more check(s) did not pass; see the job summary or junit.xml\n", rest)
	}
}
