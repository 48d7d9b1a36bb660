package matrix

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// findChromium returns the path of chromium, or skips the test (fails it
// when CI=true: CI must run it), as report's browser test does.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "chromium not found in PATH (neither chromium nor chromium-browser): install Debian's chromium (apt-get install chromium) to run the browser test of the matrix page"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// runChromium runs headless chromium on url in its own process group,
// killed at the end, and returns its stdout and stderr.
func runChromium(t *testing.T, bin, url string, args ...string) (stdoutB, stderrB []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), url)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	err := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err != nil {
		t.Fatalf("chromium %v: %v\nstderr:\n%s", args, err, stderr.String())
	}
	return stdout.Bytes(), stderr.Bytes()
}

var rowRe = regexp.MustCompile(`<tr data-client="([^"]*)" data-provider="[^"]*"( class="([^"]*)")?>`)

// visibleRows lists the table's rows not hidden, in the DOM's order.
func visibleRows(dom string) []string {
	var out []string
	for _, m := range rowRe.FindAllStringSubmatch(dom, -1) {
		if !strings.Contains(m[3], "hidden") {
			out = append(out, m[1])
		}
	}
	return out
}

// TestBrowserPage loads index.html in headless Chromium: no script error
// and no console message; the filters and the sort read from the URL's
// fragment hide and order the rows; a phone-sized window renders it.
func TestBrowserPage(t *testing.T) {
	bin := findChromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "index.html")
	var b bytes.Buffer
	if err := HTML(&b, fixtureMatrix(t)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "phone.png")
	runChromium(t, bin, "file://"+page, "--screenshot="+shot, "--window-size=390,844")
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Fatalf("no screenshot at phone size: %v", err)
	}
	cases := []struct {
		fragment string
		rows     []string
		sorted   string // a pattern of the header cell marked sorted
	}{
		{"", []string{"anthropic-node", "sdk-b", "missing"}, ""},
		{"#provider=openai", []string{"missing"}, ""},
		{"#provider=anthropic&behaviour=retryAfter.seconds:no", []string{"sdk-b"}, ""},
		{"#sort=-maxRetries", []string{"sdk-b", "anthropic-node", "missing"}, `<th data-key="maxRetries"[^>]*aria-sort="descending"`},
		{"#sort=client", []string{"anthropic-node", "missing", "sdk-b"}, `<th class="client" data-key="client"[^>]*aria-sort="ascending"`},
	}
	for _, c := range cases {
		domB, logB := runChromium(t, bin, "file://"+page+c.fragment, "--dump-dom", "--enable-logging=stderr", "--v=0")
		dom := string(domB)
		for _, l := range strings.Split(string(logB), "\n") {
			if strings.Contains(l, ":CONSOLE") {
				t.Errorf("%s: console message: %s", c.fragment, l)
			}
		}
		if m := regexp.MustCompile(`data-js-error="([^"]*)"`).FindStringSubmatch(dom); m != nil {
			t.Fatalf("%s: script error in the page: %s", c.fragment, m[1])
		}
		if !strings.Contains(dom, `data-ready="1"`) {
			t.Fatalf("%s: the page's script did not finish:\n%.2000s", c.fragment, dom)
		}
		if got := visibleRows(dom); strings.Join(got, ",") != strings.Join(c.rows, ",") {
			t.Errorf("%s: rows shown %v, want %v", c.fragment, got, c.rows)
		}
		if c.sorted != "" && !regexp.MustCompile(c.sorted).MatchString(dom) {
			t.Errorf("%s: no %s in the header", c.fragment, c.sorted)
		}
	}
}
