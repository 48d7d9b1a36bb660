package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/report"
)

// findChromium returns the path of chromium, or skips the test (fails it
// when CI=true: CI must run it).
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "chromium not found in PATH (neither chromium nor chromium-browser): install Debian's chromium (apt-get install chromium) to run the browser test of report html"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// runChromium runs headless chromium with args on page and returns its
// stdout. The browser runs in its own process group, killed at the end, so
// that no renderer outlives the test.
func runChromium(t *testing.T, bin, page string, args ...string) (stdoutB, stderrB []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Start()
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	err = cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // helpers left behind
	if err != nil {
		t.Fatalf("chromium %v: %v\nstderr:\n%s", args, err, lastLines(stderr.String(), 20))
	}
	return stdout.Bytes(), stderr.Bytes()
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

var (
	timelineRe = regexp.MustCompile(`<svg[^>]*class="timeline"[^>]*data-scenario="([^"]*)"`)
	scenarioRe = regexp.MustCompile(`(?s)<div class="scenario[^"]*" data-scenario="([^"]*)" data-run="\d+">(.*?)</svg>`)
	observedRe = regexp.MustCompile(`data-wait="(\d+)" data-observed-ms="(\d+)"`)
	clientRe   = regexp.MustCompile(`data-wait="(\d+)" data-client-ms="(\d+)"`)
)

// TestReportInBrowser runs three built-in scenarios, renders their report
// and opens it in headless chromium: a screenshot, and the DOM as the
// browser built it, which must hold one timeline per scenario whose drawn
// waits are result.json's, and no script error.
func TestReportInBrowser(t *testing.T) {
	bin := findChromium(t)
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("runs scenarios and a browser; skipped with -short")
	}
	var scs []*scenario.Scenario
	for _, name := range []string{"forgeflare-max-4-retries", "forgeflare-429-retry-after", "forgeflare-400-no-retry"} {
		sc, err := scenario.LoadScenario(filepath.Join("..", "scenarios", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
	}
	toxi, err := mock.StartToxiproxy(t.Context(), "")
	if err != nil {
		t.Fatalf("StartToxiproxy: %v", err)
	}
	defer toxi.Close()
	r := &chaos.Runner{Toxi: toxi, ToxiName: "embedded", Out: t.TempDir(), Seed: 3, TimeScale: 0.05}
	sum, err := r.Run(t.Context(), scs)
	if err != nil {
		t.Fatal(err)
	}
	checkInBrowser(t, bin, sum.RunDir)
}

// TestReportInBrowserRunFolder checks the page of a run folder made
// elsewhere (RETRYLAB_REPORT_RUN=DIR, a folder holding summary.json), e.g.
// of the whole scenario suite: go test -run RunFolder ./report.
func TestReportInBrowserRunFolder(t *testing.T) {
	dir := os.Getenv("RETRYLAB_REPORT_RUN")
	if dir == "" {
		t.Skip("set RETRYLAB_REPORT_RUN to a chaos run folder (holding summary.json) to check its page in chromium")
	}
	checkInBrowser(t, findChromium(t), dir)
}

// checkInBrowser renders the page of the run folder runDir and checks it
// in chromium against each scenario's result.json.
func checkInBrowser(t *testing.T, bin, runDir string) {
	runs, err := report.LoadRuns(t.Context(), []string{runDir})
	if err != nil || len(runs.Runs) != 1 {
		t.Fatalf("LoadRuns: %v, %d runs", err, len(runs.Runs))
	}
	// What result.json says, scenario by scenario.
	want := map[string]chaos.DelaysMs{}
	for _, sc := range runs.Runs[0].Scenarios {
		b, err := os.ReadFile(filepath.Join(runDir, sc.Name, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		var res chaos.Result
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		want[res.Name] = res.DelaysMs
	}
	if len(want) > 500 {
		t.Fatalf("%d scenarios: the page draws at most 500 of each kind; check a smaller run", len(want))
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := report.PageHTML(&buf, report.Page{Runs: runs.Runs}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	shot := filepath.Join(dir, "shot.png")
	runChromium(t, bin, page, "--screenshot="+shot, "--window-size=1280,2000")
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Fatalf("no screenshot: %v", err)
	}

	// --enable-logging=stderr prints every console message as a
	// ":CONSOLE" line: the page must log none.
	domB, logB := runChromium(t, bin, page, "--dump-dom", "--enable-logging=stderr", "--v=0")
	dom := string(domB)
	for _, l := range strings.Split(string(logB), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			t.Errorf("console message: %s", l)
		}
	}
	if !strings.Contains(dom, "</body>") {
		t.Fatalf("--dump-dom gave no page:\n%s", lastLines(dom, 10))
	}
	if m := regexp.MustCompile(`data-js-error="([^"]*)"`).FindStringSubmatch(dom); m != nil {
		t.Errorf("script error in the page: %s", m[1])
	}
	seen := map[string]int{}
	for _, m := range timelineRe.FindAllStringSubmatch(dom, -1) {
		seen[m[1]]++
	}
	for name := range want {
		if seen[name] != 1 {
			t.Errorf("scenario %s: %d timelines in the DOM, want 1", name, seen[name])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("timelines for %v, want %d scenarios", seen, len(want))
	}
	checked := 0
	for _, m := range scenarioRe.FindAllStringSubmatch(dom, -1) {
		name, body := m[1], m[2]
		d := want[name]
		check := func(what string, re *regexp.Regexp, ms []int64) {
			got := re.FindAllStringSubmatch(body, -1)
			if len(got) != len(ms) {
				t.Errorf("%s: %d %s waits drawn, result.json has %d (%v)", name, len(got), what, len(ms), ms)
				return
			}
			for i, g := range got {
				if g[1] != strconv.Itoa(i+1) || g[2] != strconv.FormatInt(ms[i], 10) {
					t.Errorf("%s: %s wait drawn as %s=%sms, result.json has wait %d = %dms", name, what, g[1], g[2], i+1, ms[i])
				}
			}
		}
		check("observed", observedRe, d.Server)
		check("client", clientRe, d.Client)
		if len(d.Server) == 0 && name == "forgeflare-max-4-retries" {
			t.Errorf("%s: no server waits in result.json; the test checks nothing", name)
		}
		checked++
	}
	if checked != len(want) {
		t.Errorf("checked the waits of %d scenarios, want %d", checked, len(want))
	}
}
