package verify

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// maxOutputRead bounds how much of stdout.txt expect.output reads.
const maxOutputRead = 4 << 20

// ReadStdout returns the start of the client's stdout.txt in dir (already
// redacted), at most maxOutputRead bytes; "" when there is none. It is
// opened as every run file is: never through a link.
func ReadStdout(dir string) string {
	f, err := runfolder.OpenRunFile(filepath.Join(dir, "stdout.txt"))
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxOutputRead))
	return string(b)
}

// outputCheck checks expect.output against the client's stdout.
func outputCheck(oe scenario.OutputExpect, ob Observed) Check {
	var want, wrong []string
	for _, s := range oe.Contains {
		want = append(want, "contains "+strconv.Quote(scenario.Excerpt(s, 80)))
		if !strings.Contains(ob.Stdout, s) {
			wrong = append(wrong, "lacks "+strconv.Quote(scenario.Excerpt(s, 80)))
		}
	}
	for _, s := range oe.NotContains {
		want = append(want, "does not contain "+strconv.Quote(scenario.Excerpt(s, 80)))
		if strings.Contains(ob.Stdout, s) {
			wrong = append(wrong, "holds "+strconv.Quote(scenario.Excerpt(s, 80)))
		}
	}
	c := Check{Name: "output", Passed: len(wrong) == 0, Want: strings.Join(want, ", "),
		Got: fmt.Sprintf("%d bytes: %s", len(ob.Stdout), strconv.Quote(scenario.Excerpt(ob.Stdout, 300))), Where: "stdout.txt"}
	if len(wrong) > 0 {
		c.Where = "stdout.txt: " + strings.Join(wrong, ", ")
	}
	return c
}
