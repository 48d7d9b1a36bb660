package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/retrylab/retrylab/chaos/client"
	"github.com/retrylab/retrylab/trace/analyze"
)

// TestMain lets the test binary act as the retrylab command inside scripts.
func TestMain(m *testing.M) {
	// Before testscript: a re-executed test binary is a client's supervisor.
	client.MaybeSupervise()
	testscript.Main(m, map[string]func(){
		"retrylab": func() {
			// Tests of the second signal stretch the grace period so that
			// only the second signal can end the command in time.
			if g, err := time.ParseDuration(os.Getenv("RETRYLAB_TEST_STOP_GRACE")); err == nil {
				stopGrace = g
			}
			// Tests of the forced exit on a busy machine give its hooks
			// time: they test what is written, not how fast.
			if b, err := time.ParseDuration(os.Getenv("RETRYLAB_TEST_FLUSH_BOUND")); err == nil {
				flushBound = b
			}
			if f := os.Getenv("RETRYLAB_TEST_READY_FILE"); f != "" {
				signalsReady = func() { _ = os.WriteFile(f, nil, 0o600) }
			}
			os.Exit(mainExit(os.Args[1:], os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs the CLI scripts in testdata/script/*.txtar.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Condition: func(cond string) (bool, error) {
			if cond == "root" {
				return os.Geteuid() == 0, nil
			}
			return false, nil
		},
	})
}

// TestScriptRegistryCovered: analyze_registry.txtar fires an alert on, and
// finds in --help, every metric of analyze.Registry.
func TestScriptRegistryCovered(t *testing.T) {
	data, err := os.ReadFile("testdata/script/analyze_registry.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range analyze.Registry {
		for _, want := range []string{"--alert '" + d.Name + ">", "stderr '^alert firing: " + d.Name + "'", "stdout '^  " + d.Name + ` \(`} {
			if !strings.Contains(string(data), want) {
				t.Errorf("analyze_registry.txtar lacks %q", want)
			}
		}
	}
}
