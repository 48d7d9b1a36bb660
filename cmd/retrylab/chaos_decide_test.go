package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/retrylab/retrylab/chaos"
	"github.com/retrylab/retrylab/chaos/runfolder"
)

// chaosExit is the exit code's decision: a table, no run.
func TestChaosExit(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	errRes := func(name, msg string) chaos.Result {
		return chaos.Result{Name: name, Verdict: chaos.VerdictError, Error: msg}
	}
	tests := []struct {
		name       string
		ctx        context.Context
		failOnSkip bool
		sum        chaos.Summary
		code       int
		msg        string
	}{
		{"all passed", context.Background(), false, chaos.Summary{Passed: 3}, exitOK, ""},
		{"failed", context.Background(), false, chaos.Summary{Failed: 1, Scenarios: make([]chaos.Result, 3)}, exitFailed, ""},
		{"skipped", context.Background(), false, chaos.Summary{Skipped: 1}, exitOK, ""},
		{"skipped, --fail-on-skip", context.Background(), true, chaos.Summary{Skipped: 1, Scenarios: make([]chaos.Result, 2)}, exitFailed, ""},
		{"error of the run: its cause is named", context.Background(), false, chaos.Summary{Errors: 2, Failed: 1,
			Scenarios: []chaos.Result{errRes("a", "stopped: proxy gone"), errRes("b", "start mock and proxy: too many open files")}},
			exitBadUser, "first: b: start mock and proxy: too many open files"},
		{"interrupted", cancelled, false, chaos.Summary{Failed: 1, Interrupted: 2, Scenarios: make([]chaos.Result, 3)}, exitInterrupted, "2 of 3 scenarios unfinished"},
	}
	for _, tt := range tests {
		err := chaosExit(tt.ctx, chaosRunConfig{failOnSkip: tt.failOnSkip}, &tt.sum)
		var stderr strings.Builder
		if code := exitCode(err, &stderr); code != tt.code {
			t.Errorf("%s: exit %d, want %d (%v)", tt.name, code, tt.code, err)
		}
		if tt.msg != "" && (err == nil || !strings.Contains(err.Error(), tt.msg)) {
			t.Errorf("%s: error %v, want it to say %q", tt.name, err, tt.msg)
		}
	}
}

// TestChaosExitHint (issue 18): the hint of an error of the run is about
// its cause: a client.command that cannot start has its own, an
// infrastructure error runfolder.InfraHint.
func TestChaosExitHint(t *testing.T) {
	t.Parallel()
	cmdHint := "a program with a slash is looked up from the folder retrylab runs in, then next to the scenario file; check the path, or build the client first"
	for _, tt := range []struct {
		name string
		res  chaos.Result
		hint string
	}{
		{"a command that does not exist", chaos.Result{Name: "a", Verdict: chaos.VerdictError,
			Error: `client could not start: client.command "./no-such-agent" (resolved to /x/no-such-agent, from the current folder /x) does not exist`, ErrorHint: cmdHint}, cmdHint},
		{"too many open files", chaos.Result{Name: "a", Verdict: chaos.VerdictError, Error: "start mock and proxy: too many open files"}, runfolder.InfraHint},
	} {
		err := chaosExit(context.Background(), chaosRunConfig{}, &chaos.Summary{Errors: 1, Scenarios: []chaos.Result{tt.res}})
		var stderr strings.Builder
		exitCode(err, &stderr)
		if !strings.Contains(stderr.String(), "\nhint: "+tt.hint+"\n") {
			t.Errorf("%s: stderr %q, want the hint %q", tt.name, stderr.String(), tt.hint)
		}
	}
}

func TestParseChaosRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args    []string
		wantErr string
	}{
		{nil, ""},
		{[]string{"--format", "xml"}, `unknown format "xml"`},
		{[]string{"--parallel", "-1"}, "must not be negative"},
		{[]string{"--time-scale", "5000"}, "bad --time-scale"},
		{[]string{"--seed", "x"}, `bad --seed "x"`},
	}
	for _, tt := range tests {
		cfg, err := parseChaosRun(tt.args, io.Discard, io.Discard)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%q: %v", tt.args, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%q: error %v, want %q", tt.args, err, tt.wantErr)
		case tt.wantErr == "" && (cfg.format != "table" || cfg.out != "runs" || cfg.confirm != 2 || len(cfg.paths) != 1 || cfg.paths[0] != "scenarios"):
			t.Errorf("defaults: %+v", cfg)
		}
	}
	cfg, err := parseChaosRun([]string{"--seed", "42", "--shard", "2/4", "a.yaml"}, io.Discard, io.Discard)
	if err != nil || cfg.seed != 42 || cfg.shard != "2/4" || cfg.paths[0] != "a.yaml" {
		t.Errorf("--seed 42 --shard 2/4 a.yaml: %+v, %v", cfg, err)
	}
}
