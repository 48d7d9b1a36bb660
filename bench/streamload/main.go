// Command streamload puts any server of OpenAI-style chat-completions
// streams under load, from outside: the chaos mock as `chaos serve` runs it
// (through its proxy, the path clients use), or another mock such as
// aimock, for a side-by-side comparison (bench/mock-vs-aimock.sh). N
// clients each send the same streaming request one after another for a
// while, either over a fresh connection per stream or keeping their
// connection alive between streams (HTTP/1.1, redialing only when the
// server closes it). Every response must be a 200 whose stream has as many
// SSE events and as many bytes of body as the first one (ids and times may
// differ, not the events): a stream cut short or answered otherwise counts
// as failed. It prints one line of key=value figures:
//
//	go run ./bench/streamload -url http://127.0.0.1:8080/v1/chat/completions -c 50 -d 10s -keepalive -pid 1234
//
// streams/s counts the streams that started after the warm-up and ended
// before the end; ttfb is from the request's first byte (fresh: from
// dialing) to the response's first byte; cpu_ms_per_stream is the server's
// user+system CPU (from /proc/PID/stat of -pid, Linux) over those seconds
// divided by the streams. It exits 1 when a stream failed, 2 on bad usage.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// defaultBody is the request every stream sends: a streaming chat
// completion, as the OpenAI SDKs send it.
const defaultBody = `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`

// streamTimeout bounds one stream, request to the end of its body.
const streamTimeout = 30 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(mainErr(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func mainErr(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("streamload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	rawURL := fs.String("url", "", "the chat-completions URL, e.g. http://127.0.0.1:8080/v1/chat/completions")
	fs.IntVar(&cfg.Clients, "c", 50, "concurrent clients")
	fs.DurationVar(&cfg.Duration, "d", 10*time.Second, "how long streams are counted, after the warm-up")
	fs.DurationVar(&cfg.Warmup, "warmup", time.Second, "streams run but are not counted for this long first")
	fs.BoolVar(&cfg.KeepAlive, "keepalive", false, "keep each client's connection between streams (redial when the server closes it)")
	fs.IntVar(&cfg.PID, "pid", 0, "the server's process id, for its CPU per stream (Linux /proc)")
	fs.StringVar(&cfg.Body, "body", defaultBody, "the request body")
	fs.StringVar(&cfg.Label, "label", "", "a label printed first on the line")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	u, err := url.Parse(*rawURL)
	if err != nil || u.Scheme != "http" || u.Host == "" || cfg.Clients < 1 || cfg.Duration <= 0 || cfg.Warmup < 0 || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "error: -url must be an http:// URL, -c ≥ 1, -d > 0, -warmup ≥ 0, with no arguments")
		fmt.Fprintln(stderr, "hint: go run ./bench/streamload -url http://127.0.0.1:8080/v1/chat/completions -c 50 -d 10s")
		return 2
	}
	cfg.Addr = u.Host
	cfg.Path = u.RequestURI()
	res, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return 2
	}
	fmt.Fprintln(stdout, res.line(cfg))
	if res.Failed > 0 {
		fmt.Fprintf(stderr, "error: %d stream(s) failed; first: %s\n", res.Failed, res.FirstFailed)
		return 1
	}
	return 0
}

// config is one load run.
type config struct {
	Addr, Path string // host:port and request URI
	Body       string
	Clients    int
	Warmup     time.Duration
	Duration   time.Duration
	KeepAlive  bool
	PID        int // the server's pid; 0: no CPU figure
	Label      string
}

// result is what a run measured over its counted window.
type result struct {
	Streams     int64 // complete streams counted
	Failed      int64 // failed streams, warm-up included
	FirstFailed string
	Dials       int64 // connections opened in the window
	Events      int   // SSE events of a stream (the first one's)
	BodyBytes   int   // body bytes of a stream (the first one's)
	Window      time.Duration
	TTFB        []time.Duration
	CPU         time.Duration // the server's CPU over the window; -1: unknown
}

// line is the result as one line of key=value.
func (r *result) line(cfg config) string {
	mode := "fresh"
	if cfg.KeepAlive {
		mode = "keepalive"
	}
	var b strings.Builder
	if cfg.Label != "" {
		b.WriteString(cfg.Label + " ")
	}
	fmt.Fprintf(&b, "mode=%s c=%d streams=%d failed=%d streams_per_s=%.1f ttfb_p50_ms=%.2f ttfb_p99_ms=%.2f dials=%d events=%d body_bytes=%d",
		mode, cfg.Clients, r.Streams, r.Failed, float64(r.Streams)/r.Window.Seconds(),
		ms(percentile(r.TTFB, 0.50)), ms(percentile(r.TTFB, 0.99)), r.Dials, r.Events, r.BodyBytes)
	if r.CPU >= 0 && r.Streams > 0 {
		fmt.Fprintf(&b, " cpu_ms_per_stream=%.4f server_cpu_pct=%.0f", ms(r.CPU)/float64(r.Streams), 100*r.CPU.Seconds()/r.Window.Seconds())
	}
	return b.String()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile returns the q-quantile (0..1) of ds (nearest rank).
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[max(int(math.Ceil(q*float64(len(s))))-1, 0)]
}

// shape is the first complete stream's event count and body length, which
// every other stream must match.
type shape struct {
	once          sync.Once
	events, bytes int
}

// run runs cfg.Clients clients for the warm-up and cfg.Duration, and
// returns the figures of the streams that started after the warm-up and
// ended within the window.
func run(ctx context.Context, cfg config) (*result, error) {
	req := []byte("POST " + cfg.Path + " HTTP/1.1\r\nHost: " + cfg.Addr +
		"\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nAuthorization: Bearer sk-streamload\r\nContent-Length: " +
		strconv.Itoa(len(cfg.Body)) + "\r\n\r\n" + cfg.Body)
	if !cfg.KeepAlive {
		req = bytes.Replace(req, []byte("\r\nContent-Type"), []byte("\r\nConnection: close\r\nContent-Type"), 1)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	from, until := start.Add(cfg.Warmup), start.Add(cfg.Warmup+cfg.Duration)
	var (
		mu    sync.Mutex
		res   = &result{CPU: -1}
		sh    shape
		dials atomic.Int64
		wg    sync.WaitGroup
	)
	cpu0 := make(chan time.Duration, 1)
	go func() {
		time.Sleep(time.Until(from))
		c, _ := procCPU(cfg.PID)
		cpu0 <- c
	}()
	for range cfg.Clients {
		wg.Go(func() {
			cl := &client{cfg: cfg, req: req, dials: &dials, from: from}
			defer cl.close()
			var ttfbs []time.Duration
			var n, failed int64
			var first string
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(until) {
					break
				}
				ttfb, body, err := cl.stream(ctx)
				if err == nil {
					err = sh.check(body)
				}
				if err != nil {
					failed++
					if first == "" {
						first = err.Error()
					}
					time.Sleep(10 * time.Millisecond) // a server that is down is not spun on
					continue
				}
				if !t0.Before(from) && time.Now().Before(until) {
					n++
					ttfbs = append(ttfbs, ttfb)
				}
			}
			mu.Lock()
			res.Streams += n
			res.Failed += failed
			res.TTFB = append(res.TTFB, ttfbs...)
			if res.FirstFailed == "" {
				res.FirstFailed = first
			}
			mu.Unlock()
		})
	}
	time.Sleep(time.Until(until))
	c1, ok := procCPU(cfg.PID)
	c0 := <-cpu0
	wg.Wait()
	if ok && cfg.PID > 0 {
		res.CPU = c1 - c0
	}
	res.Window = cfg.Duration
	res.Dials = dials.Load()
	res.Events, res.BodyBytes = sh.events, sh.bytes
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, nil
}

// check records the first stream's shape, and says whether body has it.
func (s *shape) check(body []byte) error {
	ev := countEvents(body)
	s.once.Do(func() { s.events, s.bytes = ev, len(body) })
	if ev != s.events || len(body) != s.bytes {
		return fmt.Errorf("a stream of %d events and %d bytes, the first had %d and %d", ev, len(body), s.events, s.bytes)
	}
	if ev == 0 {
		return errors.New("a stream with no events")
	}
	return nil
}

// countEvents counts the SSE events of body: the data: lines.
func countEvents(body []byte) int {
	n := 0
	for line := range bytes.Lines(body) {
		if bytes.HasPrefix(line, []byte("data:")) {
			n++
		}
	}
	return n
}

// client is one load client: one connection at a time.
type client struct {
	cfg   config
	req   []byte
	dials *atomic.Int64
	from  time.Time
	c     net.Conn
	br    *bufio.Reader
	fr    *firstReader
	body  bytes.Buffer
}

func (cl *client) close() {
	if cl.c != nil {
		cl.c.Close()
		cl.c = nil
	}
}

// stream sends one request (dialing when there is no connection) and reads
// the response and its whole body. It returns the time to the response's
// first byte and the body.
func (cl *client) stream(ctx context.Context) (time.Duration, []byte, error) {
	start := time.Now()
	if cl.c == nil {
		d := net.Dialer{Timeout: streamTimeout}
		c, err := d.DialContext(ctx, "tcp", cl.cfg.Addr)
		if err != nil {
			return 0, nil, err
		}
		if time.Now().After(cl.from) {
			cl.dials.Add(1)
		}
		cl.c = c
		cl.fr = &firstReader{r: c}
		cl.br = bufio.NewReaderSize(cl.fr, 32<<10)
	}
	_ = cl.c.SetDeadline(start.Add(streamTimeout))
	cl.fr.at = time.Time{}
	if _, err := cl.c.Write(cl.req); err != nil {
		cl.close()
		return 0, nil, fmt.Errorf("write: %w", err)
	}
	resp, err := http.ReadResponse(cl.br, nil)
	if err != nil {
		cl.close()
		return 0, nil, fmt.Errorf("read response: %w", err)
	}
	ttfb := cl.fr.at.Sub(start)
	cl.body.Reset()
	_, err = cl.body.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		cl.close()
		return 0, nil, fmt.Errorf("read body after %d bytes: %w", cl.body.Len(), err)
	}
	if resp.StatusCode != 200 {
		cl.close()
		return 0, nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	if !cl.cfg.KeepAlive || resp.Close {
		cl.close()
	}
	return ttfb, cl.body.Bytes(), nil
}

// firstReader stamps the moment of the first byte it reads after at is
// cleared.
type firstReader struct {
	r  io.Reader
	at time.Time
}

func (f *firstReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if n > 0 && f.at.IsZero() {
		f.at = time.Now()
	}
	return n, err
}

// clockTick is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// every Linux in use).
const clockTick = 10 * time.Millisecond

// procCPU returns the user+system CPU time pid has used (Linux); false when
// it cannot be read.
func procCPU(pid int) (time.Duration, bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces: count from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * clockTick, true
}
