// Package toxitest starts a real toxiproxy-server for tests, and lists the
// proxies retrylab left on it.
//
// The binary is $TOXIPROXY_SERVER_BIN (CI builds it: .ci/run), else
// toxiproxy-server on PATH or in $GOPATH/bin, else $GOPATH/bin/server (what
// `go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0` names
// it). Without one the test is skipped; under CI, or when
// TOXIPROXY_SERVER_BIN names a missing file, it fails.
package toxitest

import (
	"fmt"
	"go/build"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
)

// Server starts a toxiproxy-server on a free loopback port and returns its
// API URL. It is stopped when the test ends.
func Server(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("TOXIPROXY_SERVER_BIN")
	if bin == "" {
		bin = filepath.Join(build.Default.GOPATH, "bin", "server")
		for _, name := range []string{"toxiproxy-server", filepath.Join(build.Default.GOPATH, "bin", "toxiproxy-server")} {
			if p, err := exec.LookPath(name); err == nil {
				bin = p
				break
			}
		}
	}
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("no toxiproxy-server at %s (%v): set TOXIPROXY_SERVER_BIN, or go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0", bin, err)
		if os.Getenv("CI") != "" || os.Getenv("TOXIPROXY_SERVER_BIN") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	c := toxiclient.NewClient(url)
	for deadline := time.Now().Add(20 * time.Second); ; {
		if _, err := c.Version(); err == nil {
			return url
		} else if time.Now().After(deadline) {
			t.Fatalf("toxiproxy-server on port %d never answered: %v", port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Proxies lists, sorted, the proxies on the server at url whose names start
// with prefix ("retrylab-" for retrylab's).
func Proxies(t testing.TB, url, prefix string) []string {
	t.Helper()
	all, err := toxiclient.NewClient(url).Proxies()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for name := range all {
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
