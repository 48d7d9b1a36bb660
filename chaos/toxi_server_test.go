//go:build unix

package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/toxitest"
)

// toxiproxyServer starts a real toxiproxy-server on a free loopback port and
// returns its API URL (see toxitest.Server: skipped without one, except
// under CI or with TOXIPROXY_SERVER_BIN set).
func toxiproxyServer(t *testing.T) string { return toxitest.Server(t) }

// TestInterruptLeavesNoProxyOnServer: an interrupt in the middle of a run
// against a real toxiproxy-server kills the clients and deletes every
// proxy the run created, and writes the summary, before Run returns.
func TestInterruptLeavesNoProxyOnServer(t *testing.T) {
	url := toxiproxyServer(t)
	toxi, err := mock.StartToxiproxy(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer toxi.Close()
	dir := t.TempDir()
	var scs []*scenario.Scenario
	for _, name := range []string{"a", "b", "c"} {
		scs = append(scs, parse(t, name, `
attempts: [{status: 529}]
expect: {outcome: success, attempts: 2}
`))
	}
	// Each client records its pid, then sleeps: only a kill ends it.
	client := fmt.Sprintf(`echo $$ > %s/$RETRYLAB_SCENARIO.pid; exec sleep 60`, dir)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	r := &Runner{Toxi: toxi, ToxiName: url, Out: filepath.Join(dir, "runs"), Parallel: 2, ClientCmd: client, Seed: 1}
	done := make(chan struct{})
	var sum *Summary
	var runErr error
	var stopped time.Time
	go func() {
		defer close(done)
		sum, runErr = r.Run(ctx, scs)
		stopped = time.Now()
	}()
	// Interrupt once two clients sleep behind their proxies.
	var pids []int
	for deadline := time.Now().Add(30 * time.Second); len(pids) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the clients never started")
		}
		pids = pids[:0]
		for _, name := range []string{"a", "b", "c"} {
			if b, err := os.ReadFile(filepath.Join(dir, name+".pid")); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
					pids = append(pids, pid)
				}
			}
		}
	}
	if got := toxitest.Proxies(t, url, mock.ProxyPrefix); len(got) != 2 {
		t.Fatalf("proxies on the server before the interrupt: %v, want 2", got)
	}
	sent := time.Now()
	cancel(errTestInterrupt)
	<-done
	t.Logf("Run returned %s after the interrupt", stopped.Sub(sent).Round(time.Millisecond))
	if runErr != nil {
		t.Fatal(runErr)
	}
	if got := toxitest.Proxies(t, url, mock.ProxyPrefix); len(got) != 0 {
		t.Errorf("proxies left on the server after the interrupt: %v", got)
	}
	for _, pid := range pids {
		if mock.ProcessAlive(pid) {
			t.Errorf("client %d still running after the interrupt", pid)
		}
	}
	if sum.Interrupted != 3 || sum.Failed != 0 {
		t.Errorf("summary: %d interrupted, %d failed, want 3 and 0", sum.Interrupted, sum.Failed)
	}
	if _, err := os.Stat(filepath.Join(sum.RunDir, "summary.json")); err != nil {
		t.Error(err)
	}
	// A guard far above the 0.8 s the CLI allows, against a runner that
	// waited for its clients: they sleep for a minute.
	if d := stopped.Sub(sent); d > 20*time.Second {
		t.Errorf("Run returned %s after the interrupt", d)
	}
}

// deadPid returns the pid of a process that has exited.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if mock.ProcessAlive(pid) {
		t.Skipf("pid %d was reused at once", pid)
	}
	return pid
}

// TestStaleProxiesRemovedOnStart: a run SIGKILLed on this machine left its
// proxies on the toxiproxy-server for good. The next run removes those of
// dead retrylab processes on this machine, and keeps a live run's, another
// machine's, and names it did not make.
func TestStaleProxiesRemovedOnStart(t *testing.T) {
	url := toxiproxyServer(t)
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = live.Process.Kill(); _ = live.Wait() })
	dead := deadPid(t)
	stale := fmt.Sprintf("retrylab-%s-dead-1-1", mock.OwnerTag(dead))
	keep := []string{
		fmt.Sprintf("retrylab-%s-live-1-1", mock.OwnerTag(live.Process.Pid)),
		fmt.Sprintf("retrylab-%d.%s-elsewhere-1-1", dead, "0badc0de"),
		"retrylab-older-version-1-1",
		"someone-else",
	}
	if mock.HostTag() == "0badc0de" {
		t.Skip("this machine's name hashes to the test's other host")
	}
	c := toxiclient.NewClient(url)
	for _, name := range append([]string{stale}, keep...) {
		if _, err := c.CreateProxy(name, "127.0.0.1:0", "127.0.0.1:1"); err != nil {
			t.Fatal(err)
		}
	}
	toxi, err := mock.StartToxiproxy(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer toxi.Close()
	removed, err := toxi.Stale()
	if err != nil || !slices.Equal(removed, []string{stale}) {
		t.Errorf("Stale() = %v, %v; want [%s]", removed, err, stale)
	}
	all, err := c.Proxies()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := all[stale]; ok {
		t.Errorf("%s (pid %d, dead) is still on the server", stale, dead)
	}
	for _, name := range keep {
		if _, ok := all[name]; !ok {
			t.Errorf("%s was removed", name)
		}
	}
}

// TestProxyOwner: the owner parsed back from createProxy's names, and no
// owner for the names of older versions or anyone else.
func TestProxyOwner(t *testing.T) {
	tests := []struct {
		name string
		pid  int
		host string
		ok   bool
	}{
		{"retrylab-123.0a1b2c3d-overloaded-42-1", 123, "0a1b2c3d", true},
		{"retrylab-" + mock.OwnerTag(7) + "-x-1-1", 7, mock.HostTag(), true},
		{"retrylab-overloaded-529-123456-1", 0, "", false}, // an older version's
		{"retrylab-123.short-x", 0, "", false},
		{"retrylab--1.0a1b2c3d-x", 0, "", false},
		{"other-123.0a1b2c3d-x", 0, "", false},
	}
	for _, tt := range tests {
		pid, host, ok := mock.ProxyOwner(tt.name)
		if pid != tt.pid || host != tt.host || ok != tt.ok {
			t.Errorf("proxyOwner(%q) = %d, %q, %v; want %d, %q, %v", tt.name, pid, host, ok, tt.pid, tt.host, tt.ok)
		}
	}
}
