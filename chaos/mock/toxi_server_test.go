//go:build unix

package mock

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"testing"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/retrylab/retrylab/internal/toxitest"
)

// toxiproxyServer starts a real toxiproxy-server on a free loopback port and
// returns its API URL (see toxitest.Server: skipped without one, except
// under CI or with TOXIPROXY_SERVER_BIN set).
func toxiproxyServer(t *testing.T) string { return toxitest.Server(t) }

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
	stale := fmt.Sprintf("retrylab-%s-dead-1-1", ownerTag(dead))
	keep := []string{
		fmt.Sprintf("retrylab-%s-live-1-1", ownerTag(live.Process.Pid)),
		fmt.Sprintf("retrylab-%d.%s-elsewhere-1-1", dead, "0badc0de"),
		"retrylab-older-version-1-1",
		"someone-else",
	}
	if hostTag() == "0badc0de" {
		t.Skip("this machine's name hashes to the test's other host")
	}
	c := toxiclient.NewClient(url)
	for _, name := range append([]string{stale}, keep...) {
		if _, err := c.CreateProxy(name, "127.0.0.1:0", "127.0.0.1:1"); err != nil {
			t.Fatal(err)
		}
	}
	toxi, err := StartToxiproxy(context.Background(), url)
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
		{"retrylab-" + ownerTag(7) + "-x-1-1", 7, hostTag(), true},
		{"retrylab-overloaded-529-123456-1", 0, "", false}, // an older version's
		{"retrylab-123.short-x", 0, "", false},
		{"retrylab--1.0a1b2c3d-x", 0, "", false},
		{"other-123.0a1b2c3d-x", 0, "", false},
	}
	for _, tt := range tests {
		pid, host, ok := proxyOwner(tt.name)
		if pid != tt.pid || host != tt.host || ok != tt.ok {
			t.Errorf("proxyOwner(%q) = %d, %q, %v; want %d, %q, %v", tt.name, pid, host, ok, tt.pid, tt.host, tt.ok)
		}
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
	if ProcessAlive(pid) {
		t.Skipf("pid %d was reused at once", pid)
	}
	return pid
}
