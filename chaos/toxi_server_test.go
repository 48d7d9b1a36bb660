//go:build unix

package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
	// --proxy always: a 529 needs no proxy of its own.
	r := &Runner{Toxi: toxi, ToxiName: url, Out: filepath.Join(dir, "runs"), Parallel: 2, ClientCmd: client, Seed: 1, Proxy: mock.ProxyAlways}
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
