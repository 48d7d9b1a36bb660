package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sseServer answers every POST with a stream of n events (the last one
// short when cut), counting the connections it accepted.
func sseServer(t *testing.T, n int, cutEvery int64) (*httptest.Server, *atomic.Int64) {
	var conns, reqs atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		k := n
		if cutEvery > 0 && reqs.Add(1)%cutEvery == 0 {
			k = n - 1
		}
		for i := range k {
			fmt.Fprintf(w, "data: {\"i\":%d}\n\n", i%10)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// TestRunFreshAndKeepAlive: fresh clients dial once per stream, keep-alive
// clients once in all; every stream is counted with its events, and the
// CPU figure is read from /proc for our own pid.
func TestRunFreshAndKeepAlive(t *testing.T) {
	for _, ka := range []bool{false, true} {
		t.Run(fmt.Sprint("keepalive=", ka), func(t *testing.T) {
			srv, conns := sseServer(t, 5, 0)
			cfg := config{Addr: strings.TrimPrefix(srv.URL, "http://"), Path: "/v1/chat/completions", Body: defaultBody,
				Clients: 3, Warmup: 50 * time.Millisecond, Duration: 300 * time.Millisecond, KeepAlive: ka, PID: os.Getpid()}
			res, err := run(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Failed > 0 || res.Streams == 0 || res.Events != 5 || len(res.TTFB) != int(res.Streams) {
				t.Fatalf("streams %d failed %d (%s) events %d ttfb %d", res.Streams, res.Failed, res.FirstFailed, res.Events, len(res.TTFB))
			}
			if ka && conns.Load() != 3 {
				t.Errorf("keep-alive: %d connections, want one per client (3)", conns.Load())
			}
			if !ka && conns.Load() < res.Streams {
				t.Errorf("fresh: %d connections for %d streams", conns.Load(), res.Streams)
			}
			if _, ok := procCPU(os.Getpid()); !ok && res.CPU != -1 {
				t.Errorf("CPU %v without /proc", res.CPU)
			}
			if line := res.line(cfg); !strings.Contains(line, "events=5") {
				t.Errorf("line %q", line)
			}
		})
	}
}

// TestRunCountsShortStream: a stream with one event fewer than the first
// is a failed stream.
func TestRunCountsShortStream(t *testing.T) {
	srv, _ := sseServer(t, 5, 4)
	cfg := config{Addr: strings.TrimPrefix(srv.URL, "http://"), Path: "/", Body: defaultBody,
		Clients: 1, Duration: 200 * time.Millisecond, KeepAlive: true}
	res, err := run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed == 0 || !strings.Contains(res.FirstFailed, "4 events") {
		t.Fatalf("failed %d, first %q; want short streams counted", res.Failed, res.FirstFailed)
	}
}

func TestCountEvents(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"data: a\n\ndata: [DONE]\n\n", 2},
		{"event: x\ndata: a\n\n: comment\n\ndata: b", 2},
		{" data: not at the start\n", 0},
	} {
		if got := countEvents([]byte(tc.in)); got != tc.want {
			t.Errorf("countEvents(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
