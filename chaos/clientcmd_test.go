package chaos

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/chaos/runfolder"
	"github.com/retrylab/retrylab/chaos/scenario"
)

// TestCheckCommands (issue 18): a client.command whose program cannot be
// started is found before anything runs, naming the program, the path it
// resolved to and against what, and why; with a hint about the cause.
func TestCheckCommands(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for name, mode := range map[string]os.FileMode{"suite/agent": 0o755, "suite/plain.sh": 0o644, "here": 0o755} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	wd, _ := os.Getwd()
	tests := []struct {
		name, file string
		command    []string
		requires   []string
		clientCmd  string
		want       string // the message; "" for none
		hint       string // a part of the hint
	}{
		{name: "missing, next to nothing", file: "s.yaml", command: []string{"./no-such-agent"},
			want: `"./no-such-agent" (resolved to ` + filepath.Join(wd, "no-such-agent") + `, from the current folder ` + wd + `) does not exist`,
			hint: "check the path, or build the client first"},
		{name: "missing, the scenario's folder tried too", file: "suite/s.yaml", command: []string{"./no-such-agent"},
			want: `"./no-such-agent" (resolved to ` + filepath.Join(wd, "no-such-agent") + `, from the current folder ` + wd + `; suite/no-such-agent next to the scenario file was tried too) does not exist`,
			hint: "looked up from the folder retrylab runs in, then next to the scenario file"},
		{name: "a bare name not in PATH", file: "s.yaml", command: []string{"retrylab-no-such-program"},
			want: `"retrylab-no-such-program" is not in PATH`, hint: "client.requires"},
		{name: "a folder", file: "s.yaml", command: []string{"./suite"},
			want: `"./suite" (resolved to ` + filepath.Join(wd, "suite") + `, from the current folder ` + wd + `) is a folder`, hint: "name the executable"},
		{name: "an absolute path", file: "s.yaml", command: []string{"/no/such/agent"},
			want: `"/no/such/agent" (resolved to /no/such/agent, an absolute path) does not exist`, hint: "check the path"},
		{name: "found next to the scenario file", file: "suite/s.yaml", command: []string{"./agent", "--flag"}},
		{name: "found in the current folder", file: "suite/s.yaml", command: []string{"./here"}},
		{name: "in PATH", file: "s.yaml", command: []string{"sh", "-c", "exit 0"}},
		{name: "built in", file: "s.yaml"},
		{name: "a missing requirement skips the scenario", file: "s.yaml", command: []string{"./no-such-agent"}, requires: []string{"./no-such-agent"}},
		{name: "--client-cmd replaces client.command", file: "s.yaml", command: []string{"./no-such-agent"}, clientCmd: "exit 0"},
		{name: "not executable", file: "suite/s.yaml", command: []string{"./plain.sh"},
			want: `"./plain.sh" (resolved to suite/plain.sh, from the scenario file's folder) is not executable (mode -rw-r--r--)`,
			hint: "chmod +x suite/plain.sh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if runtime.GOOS == "windows" && strings.Contains(tt.want, "not executable") {
				t.Skip("no executable bit on windows")
			}
			sc := &scenario.Scenario{Name: "s", File: tt.file, Lines: map[string]int{"client.command": 3},
				Client: scenario.Client{Command: tt.command, Requires: tt.requires}}
			errs := client.CheckCommands([]*scenario.Scenario{sc}, tt.clientCmd)
			if tt.want == "" {
				if len(errs) > 0 {
					t.Fatalf("CheckCommands = %v, want nothing", errs)
				}
				return
			}
			if len(errs) != 1 {
				t.Fatalf("CheckCommands = %v, want one problem", errs)
			}
			e := errs[0]
			if diff := cmp.Diff(tt.file+":3: client.command: "+tt.want, e.Error()); diff != "" {
				t.Errorf("message mismatch (-want +got):\n%s", diff)
			}
			if !strings.Contains(e.Hint, tt.hint) || strings.Contains(e.Hint, "ulimit") {
				t.Errorf("hint %q, want it to say %q", e.Hint, tt.hint)
			}
		})
	}
}

// TestRunMissingCommand (issue 18): a client.command that does not exist
// at run time (Runner.Run does not call CheckCommands) is the verdict
// error with a hint about the command, not about --parallel, ulimit or
// the proxy.
func TestRunMissingCommand(t *testing.T) {
	toxi := runnerToxi(t)
	sc := parse(t, "missing-agent", `
client: {command: [./retrylab-no-such-agent]}
attempts: [{status: 500}]
expect: {outcome: success, attempts: 2}
`)
	r := &Runner{Toxi: toxi, Out: t.TempDir(), Seed: 1}
	sum, err := r.Run(context.Background(), []*scenario.Scenario{sc})
	if err != nil {
		t.Fatal(err)
	}
	res := sum.Scenarios[0]
	if res.Verdict != VerdictError || !strings.Contains(res.Error, `client could not start: client.command "./retrylab-no-such-agent" (resolved to `) ||
		!strings.HasSuffix(res.Error, ") does not exist") {
		t.Errorf("verdict %s, error %q; want error, naming the command, where it resolved to, and that it does not exist", res.Verdict, res.Error)
	}
	if !strings.Contains(res.ErrorHint, "check the path") || res.ErrorHint == runfolder.InfraHint {
		t.Errorf("hint %q, want one about the command", res.ErrorHint)
	}
}
