//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInputsNotRegular is issue 18's regression test: a scenario file, a
// policy file (client.policy: FILE) or an alerts file (--alerts FILE)
// that is a FIFO, a link to one, a device or a folder is exit 2 at once,
// naming the file, with a hint. A FIFO used to block chaos validate and
// chaos run until a writer came. The 10 s limit only detects a hang.
func TestInputsNotRegular(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, f := range []string{"pipe.yaml", "policies/p.yaml", "alerts.yaml"} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
	}
	files := map[string]string{
		"policy.yaml": "name: p\nclient:\n  policy: policies/p.yaml\nattempts: [{status: 500}]\nexpect: {outcome: success, attempts: 2}\n",
		"trace.jsonl": `{"type":"ProviderRequestFinished","runId":"r1","payload":{"provider":"p","model":"m","success":true,"retries":0}}` + "\n",
	}
	for name, data := range files {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("pipe.yaml", "link.yaml"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"validate a FIFO", []string{"chaos", "validate", "pipe.yaml"}, "pipe.yaml: is a FIFO (named pipe), not a regular file"},
		{"run a FIFO", []string{"chaos", "run", "--out", "runs", "pipe.yaml"}, "pipe.yaml: is a FIFO (named pipe), not a regular file"},
		{"validate a link to a FIFO", []string{"chaos", "validate", "link.yaml"}, "link.yaml: is a symbolic link to a FIFO (named pipe)"},
		{"run a link to a FIFO", []string{"chaos", "run", "--out", "runs", "link.yaml"}, "link.yaml: is a symbolic link to a FIFO (named pipe)"},
		{"serve a folder", []string{"chaos", "serve", "--scenario", "policies"}, "policies: is a folder, not a regular file"},
		{"validate a device", []string{"chaos", "validate", "/dev/zero"}, "/dev/zero: is a character device, not a regular file"},
		{"validate a policy FIFO", []string{"chaos", "validate", "policy.yaml"}, "policies/p.yaml: is a FIFO (named pipe), not a regular file"},
		{"run a policy FIFO", []string{"chaos", "run", "--out", "runs", "policy.yaml"}, "policies/p.yaml: is a FIFO (named pipe), not a regular file"},
		{"analyze with an alerts FIFO", []string{"trace", "analyze", "trace.jsonl", "--alerts", "alerts.yaml"}, "alerts.yaml: is a FIFO (named pipe) that nothing writes to"},
		{"analyze with an alerts device", []string{"trace", "analyze", "trace.jsonl", "--alerts", "/dev/zero"}, "/dev/zero: is a character device, not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, a := range tt.args {
				if _, err := os.Stat(a); strings.HasPrefix(a, "/dev/") && err != nil {
					t.Skip(err)
				}
			}
			var stdout, stderr bytes.Buffer
			done := make(chan int, 1)
			go func() {
				err := run(context.Background(), tt.args, &stdout, &stderr)
				done <- exitCode(err, &stderr)
			}()
			var code int
			select {
			case code = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%v blocked", tt.args)
			}
			if code != 2 || !strings.Contains(stderr.String(), tt.want) || !strings.Contains(stderr.String(), "\nhint: ") {
				t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 2, %q and a hint", tt.args, code, stderr.String(), tt.want)
			}
			if _, err := os.Stat("runs"); err == nil {
				t.Errorf("%v made the run folder", tt.args)
			}
		})
	}
}

// TestAnalyzeNamedFIFOReadOnce: a FIFO named on the command line (what
// bash's <(...) gives) was opened twice, first to sniff it for OTLP/JSON,
// whose 512 bytes were then lost to the trace reader (8 events read as 3
// and a malformed line), and whose open, with nothing writing, blocked
// past Ctrl-C. Now it is read once, as a trace.
func TestAnalyzeNamedFIFOReadOnce(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	line := `{"type":"ProviderRequestFinished","runId":"r1","payload":{"provider":"p","model":"m","success":true,"retries":0}}` + "\n"
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the reader
		if err != nil {
			return
		}
		defer w.Close()
		_, _ = w.WriteString(strings.Repeat(line, 8))
	}()
	var stdout, stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), []string{"trace", "analyze", "--format", "json", fifo}, &stdout, &stderr)
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("trace analyze FIFO: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second): // a hang guard, not a timing check: generous for a loaded CI machine
		t.Fatal("trace analyze FIFO blocked")
	}
	if !strings.Contains(stdout.String(), `"events": 8,`) || !strings.Contains(stdout.String(), `"malformedLines": 0,`) {
		t.Errorf("want 8 events and no malformed line; stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}
