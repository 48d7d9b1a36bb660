//go:build unix

package main

import (
	"bytes"
	"context"
	"io/fs"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPathFlagsNotRegular covers every flag of the CLI that names a file
// or folder to write, and the inputs not covered by TestInputsNotRegular:
// given a FIFO, a link to one, a device or a socket, each is exit 2 at
// once, naming what stands there, with a hint; nothing blocks, runs or
// replaces it. --junit and trace failures -o opened a FIFO for writing,
// which waits for a reader for ever; --policy-out and report html -o
// renamed a file over it at the end; --against read a FIFO (blocking) or
// /dev/zero (without end). The 10 s limit only detects a hang.
//
// The path flags: chaos run --out, --junit; chaos serve --journal; chaos
// probe --out, --policy-out, --against; report html -o; trace failures -o;
// trace analyze and trace rules --alerts. (Scenario files, policy files
// and report html's run files: TestInputsNotRegular and
// chaos_hostile_inputs.txtar. Trace paths named to analyze, export,
// failures and compare are read when they are FIFOs or devices, as
// documented in docs/analyze.md: bash's <(...); Ctrl-C stops them.)
func TestPathFlagsNotRegular(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := syscall.Mkfifo("pipe", 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if err := os.Symlink("pipe", "link"); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", "sock")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	files := map[string]string{
		"good.yaml":   "attempts: []\nexpect: {outcome: success}\n",
		"trace.jsonl": `{"type":"RetryAttempt","runId":"r1","payload":{"provider":"p","model":"m","attempt":1,"failureType":"overloaded","status":529,"willRetry":true,"delayMs":10}}` + "\n",
	}
	for name, data := range files {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Each flag, with P where the path goes.
	outputs := [][]string{
		{"chaos", "run", "--out", "P", "good.yaml"},
		{"chaos", "run", "--out", "runs", "--junit", "P", "good.yaml"},
		{"chaos", "serve", "--scenario", "good.yaml", "--journal", "P"},
		{"chaos", "probe", "--client-cmd", "true", "--out", "P"},
		{"chaos", "probe", "--client-cmd", "true", "--out", "runs", "--policy-out", "P"},
		{"report", "html", "trace.jsonl", "-o", "P"},
		{"trace", "failures", "trace.jsonl", "-o", "P"},
	}
	inputs := [][]string{
		{"chaos", "probe", "--client-cmd", "true", "--out", "runs", "--against", "P"},
		{"trace", "analyze", "trace.jsonl", "--alerts", "P"},
		{"trace", "rules", "--alerts", "P"},
	}
	// What stands at P, and what the error says of it. A folder flag
	// given a file-like thing says "not a directory".
	targets := []struct{ path, file, folder string }{
		{"pipe", "is a FIFO (named pipe)", "not a directory"},
		{"link", "a FIFO (named pipe)", "not a directory"}, // followed ("is a symbolic link to a FIFO", or "is a FIFO")
		{"sock", "is a socket", "not a directory"},
		{"/dev/null", "is a character device", "not a directory"},
	}
	type tcase struct {
		args []string
		want string
	}
	var cases []tcase
	for _, tmpl := range append(outputs, inputs...) {
		for _, tg := range targets {
			args := make([]string, len(tmpl))
			folder := false
			for i, a := range tmpl {
				args[i] = a
				if a == "P" {
					args[i] = tg.path
					folder = tmpl[i-1] == "--out"
				}
			}
			want := tg.file
			if folder {
				want = tg.folder
			}
			if tg.path == "/dev/null" && slices.Contains(tmpl, "--alerts") {
				want = "not a regular file" // read as empty otherwise, i.e. no alerts at all
			}
			cases = append(cases, tcase{args, want})
		}
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			done := make(chan int, 1)
			go func() { done <- exitCode(run(context.Background(), c.args, &stdout, &stderr), &stderr) }()
			var code int
			select {
			case code = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%v blocked", c.args)
			}
			if code != 2 || !strings.Contains(stderr.String(), c.want) || !strings.Contains(stderr.String(), "\nhint: ") {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2, %q and a hint", code, stderr.String(), c.want)
			}
			if strings.Contains(stderr.String(), "running") || strings.Contains(stderr.String(), "probing") {
				t.Errorf("it ran before refusing the path:\n%s", stderr.String())
			}
			if fi, err := os.Lstat("pipe"); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
				t.Fatalf("the FIFO was replaced: %v, %v", fi.Mode(), err)
			}
		})
	}
}

// TestProbePolicyOutUnwritable: a --policy-out whose folder is missing or
// not writable, or which goes through a file, is exit 2 at once with a
// hint, before any client runs (hostile report 14: it was said only after
// the whole probe). The read-only folder is checked where permissions
// bind (not as root), and a read-only file system where there is one.
func TestProbePolicyOutUnwritable(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("afile", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir("ro", 0o555); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, want, hint string }{
		{"missing/p.yaml", "no such file or directory", "create the folder it goes in first"},
		{"afile/p.yaml", "not a directory", "a file stands where a folder is needed"},
		{"missing/", "", ""}, // a folder's path: refused whatever the error says
	}
	if os.Geteuid() != 0 {
		cases = append(cases, struct{ path, want, hint string }{"ro/p.yaml", "permission denied", "not writable for you"})
	}
	if f, err := os.CreateTemp("/sys", ".retrylab-*"); err == nil {
		f.Close()
		os.Remove(f.Name())
	} else if _, serr := os.Stat("/sys"); serr == nil {
		cases = append(cases, struct{ path, want, hint string }{"/sys/p.yaml", "", "give --policy-out another path"})
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			args := []string{"chaos", "probe", "--client-cmd", "true", "--out", "runs", "--policy-out", c.path}
			var stdout, stderr bytes.Buffer
			done := make(chan int, 1)
			go func() { done <- exitCode(run(context.Background(), args, &stdout, &stderr), &stderr) }()
			var code int
			select {
			case code = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%v: still running after 10s: the path was not checked first", args)
			}
			got := stderr.String()
			if code != 2 || !strings.Contains(got, "error: cannot write --policy-out") || !strings.Contains(got, c.want) ||
				!strings.Contains(got, "\nhint: ") || !strings.Contains(got, c.hint) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2, %q and a hint %q", code, got, c.want, c.hint)
			}
			if strings.Contains(got, "probing") {
				t.Errorf("it probed before refusing the path:\n%s", got)
			}
		})
	}
}
