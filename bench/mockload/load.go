package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
)

// config is one load run.
type config struct {
	Streams   int           // concurrent streams
	Duration  time.Duration // streams are started until then
	Golden    []byte        // chaos/mock/testdata/anthropic_ok.golden
	Toxiproxy string        // API URL of a real toxiproxy-server; "": embedded
	Sample    time.Duration // memory sampling period; 0: 1s
	Log       io.Writer     // one line per sample; nil: none
	// GC forces a collection before each sample, so that the live heap is
	// exact at that moment rather than as of the last GC (it costs some
	// throughput).
	GC bool
	// KeepAttempts bounds the Env's attempt records as chaos serve does
	// (mock.EnvConfig.KeepAttempts); 0 keeps them all.
	KeepAttempts int
	// Direct serves the streams straight from the mock (mock.ProxyAuto:
	// a scenario of no faults needs no proxy) instead of through the
	// proxy (mock.ProxyAlways, the path measured in docs/performance.md).
	Direct bool
}

// sample is the process's memory at one moment of the run.
type sample struct {
	At         time.Duration // since the start
	Streams    int64         // streams completed by then
	HeapLive   uint64        // live heap as of the last GC (/gc/heap/live:bytes)
	HeapInUse  uint64        // heap objects, live or not yet swept
	RSS        uint64        // resident set size (0 where /proc is missing)
	Goroutines uint64
}

// result is what a run measured.
type result struct {
	Streams     int64 // completed byte-exact
	Failed      int64 // errors or mismatches
	FirstFailed string
	Elapsed     time.Duration // from the start to the last stream's end
	TTFB        []time.Duration
	Samples     []sample // during the run, one per period from the start
	End         sample   // after the run and a GC, the Env still open
	Before      sample   // before the proxy started
	Freed       sample   // after the Env and the proxy closed, and a GC
	start       time.Time
	Attempts    int // attempts the mock recorded
}

// StreamsPerSec is the completed streams per second.
func (r *result) StreamsPerSec() float64 { return float64(r.Streams) / r.Elapsed.Seconds() }

// Percentile returns the q-quantile (0..1) of the times to first byte.
func (r *result) Percentile(q float64) time.Duration {
	if len(r.TTFB) == 0 {
		return 0
	}
	s := slices.Clone(r.TTFB)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(i, 0)]
}

// Slope fits live heap less perStream bytes per completed stream against
// time over the samples from `from` on (least squares) and returns bytes
// per second. With perStream 0 it is the live heap's own trend.
func (r *result) Slope(from time.Duration, perStream float64) float64 {
	var n, sx, sy, sxx, sxy float64
	for _, s := range r.Samples {
		if s.At < from {
			continue
		}
		x, y := s.At.Seconds(), float64(s.HeapLive)-perStream*float64(s.Streams)
		n++
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
	}
	if n < 2 || n*sxx-sx*sx == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

// HeldPerAttempt is what the Env held per attempt it recorded: the live
// heap it freed when it closed, divided by its attempts.
func (r *result) HeldPerAttempt() float64 {
	if r.Attempts == 0 || r.End.HeapLive < r.Freed.HeapLive {
		return 0
	}
	return float64(r.End.HeapLive-r.Freed.HeapLive) / float64(r.Attempts)
}

// goldenID and goldenReset are what vary between two success streams of the
// mock, as the golden file has them: the request id's tag and number (in
// the request-id header and the message id) and the rate-limit reset time.
// Both are fixed-width, so chunk sizes never change.
const (
	goldenID    = "0123456789ab000001"
	goldenReset = "2026-11-21T10:00:01Z"
	// maxTTFB bounds the samples kept; past it only the count grows.
	maxTTFB = 1 << 20
	// streamTimeout bounds one stream, connect to EOF.
	streamTimeout = 30 * time.Second
)

// requestBody is what every stream sends: a streaming Anthropic request for
// the golden file's model.
const requestBody = `{"model":"claude-haiku-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`

// checker compares responses with the golden stream.
type checker struct {
	golden []byte
	// holes are the offsets in golden of goldenID and goldenReset.
	idAt, resetAt []int
	tag           atomic.Pointer[string] // the mock's id tag, from the first response
	seen          []atomic.Uint64        // bit n: attempt n was answered
}

func newChecker(golden []byte) (*checker, error) {
	c := &checker{golden: golden, seen: make([]atomic.Uint64, 1_000_000/64+1)}
	c.idAt = indexAll(golden, []byte(goldenID))
	c.resetAt = indexAll(golden, []byte(goldenReset))
	if len(c.idAt) != 2 || len(c.resetAt) != 3 {
		return nil, fmt.Errorf("golden stream: found the request id %d time(s) and the reset time %d time(s), want 2 and 3 "+
			"(is it chaos/mock/testdata/anthropic_ok.golden?)", len(c.idAt), len(c.resetAt))
	}
	return c, nil
}

func indexAll(b, sub []byte) []int {
	var out []int
	for off := 0; ; {
		i := bytes.Index(b[off:], sub)
		if i < 0 {
			return out
		}
		out = append(out, off+i)
		off += i + len(sub)
	}
}

// check reports whether got is the golden stream with this response's own
// request id and reset time, byte for byte, and that no other stream got
// the same attempt number. It allocates nothing on success.
func (c *checker) check(got []byte) error {
	if len(got) != len(c.golden) {
		return fmt.Errorf("%d bytes, want %d", len(got), len(c.golden))
	}
	id := got[c.idAt[0] : c.idAt[0]+len(goldenID)]
	reset := got[c.resetAt[0] : c.resetAt[0]+len(goldenReset)]
	holes := []struct {
		at []int
		v  []byte
	}{{c.idAt, id}, {c.resetAt, reset}}
	off := 0
	for {
		next, val := len(got), []byte(nil)
		for _, h := range holes {
			for _, at := range h.at {
				if at >= off && at < next {
					next, val = at, h.v
				}
			}
		}
		if !bytes.Equal(got[off:next], c.golden[off:next]) {
			i := off
			for got[i] == c.golden[i] {
				i++
			}
			return fmt.Errorf("byte %d differs: got %q, want %q", i, excerpt(got, i), excerpt(c.golden, i))
		}
		if val == nil {
			break
		}
		if !bytes.Equal(got[next:next+len(val)], val) {
			return fmt.Errorf("byte %d: got %q, want %q as at byte %d", next, got[next:next+len(val)], val, off)
		}
		off = next + len(val)
	}
	if _, err := time.Parse(time.RFC3339, string(reset)); err != nil {
		return fmt.Errorf("reset time %q: %v", reset, err)
	}
	tag := string(id[:12])
	if old := c.tag.Load(); old == nil {
		c.tag.CompareAndSwap(nil, &tag)
	}
	if *c.tag.Load() != string(id[:12]) {
		return fmt.Errorf("request id %q is not the mock's (tag %s)", id, *c.tag.Load())
	}
	n, err := strconv.Atoi(string(id[12:]))
	if err != nil || n < 1 || n/64 >= len(c.seen) {
		return fmt.Errorf("request id %q: bad attempt number", id)
	}
	bit := uint64(1) << (n % 64)
	if c.seen[n/64].Or(bit)&bit != 0 {
		return fmt.Errorf("attempt %d answered twice", n)
	}
	return nil
}

func excerpt(b []byte, i int) []byte { return b[max(i-20, 0):min(i+20, len(b))] }

// run starts an embedded Toxiproxy (or uses cfg.Toxiproxy) and the mock
// behind it with a scenario of no faults, runs cfg.Streams clients that
// stream one response after another over a fresh connection each until
// cfg.Duration has passed, and checks every response against the golden
// stream. Then it closes the mock and the proxy and samples the memory
// once more (result.Freed).
func run(ctx context.Context, cfg config) (*result, error) {
	chk, err := newChecker(cfg.Golden)
	if err != nil {
		return nil, err
	}
	if cfg.Sample <= 0 {
		cfg.Sample = time.Second
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	runtime.GC()
	before := readMem(0, 0)
	toxi, err := mock.StartToxiproxy(ctx, cfg.Toxiproxy)
	if err != nil {
		return nil, err
	}
	res, err := load(ctx, cfg, chk, toxi)
	if res != nil {
		res.Before = before
	}
	if cerr := toxi.Close(); err == nil {
		err = cerr
	}
	if res != nil {
		// The Env is gone: what it held (its attempt records) is freed.
		runtime.GC()
		runtime.GC()
		res.Freed = readMem(time.Since(res.start), res.Streams)
	}
	return res, err
}

// load runs the streams against an Env of its own behind toxi (or, with
// Direct, straight to its mock); the Env is
// closed and unreachable when it returns.
func load(ctx context.Context, cfg config, chk *checker, toxi *mock.Toxiproxy) (*result, error) {
	proxy := mock.ProxyAlways
	if cfg.Direct {
		proxy = mock.ProxyAuto
	}
	env, err := mock.StartEnv(ctx, mock.EnvConfig{
		Scenario: &scenario.Scenario{Name: "mockload", Provider: wire.ProviderAnthropic},
		Toxi:     toxi, RunID: "mockload", KeepAttempts: cfg.KeepAttempts, QuietAttempts: cfg.KeepAttempts > 0,
		Proxy: proxy,
	})
	if err != nil {
		return nil, err
	}
	defer env.Close()
	u, err := url.Parse(env.BaseURL())
	if err != nil {
		return nil, err
	}
	addr := u.Host
	req := []byte("POST " + wire.PathAnthropic + " HTTP/1.1\r\nHost: " + addr +
		"\r\nConnection: close\r\nContent-Type: application/json\r\nx-api-key: sk-ant-mockload\r\nanthropic-version: 2023-06-01\r\nContent-Length: " +
		strconv.Itoa(len(requestBody)) + "\r\n\r\n" + requestBody)

	res := &result{}
	lt := &loadTally{ttfb: make([]time.Duration, maxTTFB), res: res}
	runtime.GC()
	res.start = time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		sampleMemory(ctx, cfg, res, &lt.done)
	}()
	runStreams(ctx, cfg, chk, addr, req, lt)
	res.Elapsed = time.Duration(lt.lastEnd.Load())
	cancel()
	<-sampled
	runtime.GC() // the live heap once the last streams' garbage is gone
	res.Streams, res.Failed = lt.done.Load(), lt.failed.Load()
	res.End = readMem(time.Since(res.start), res.Streams)
	res.TTFB = lt.ttfb[:min(lt.nTTFB.Load(), maxTTFB)]
	if err := env.Close(); err != nil {
		return res, err
	}
	err = checkAttempts(res, env.Attempts(), len(cfg.Golden))
	res.Attempts = env.AttemptsSeen() // with KeepAttempts, more than the records kept
	return res, err
}

// loadTally is what the streams count as they go. ttfb is allocated once,
// before the first sample: the samples then show the mock's memory, not
// the harness's.
type loadTally struct {
	ttfb                         []time.Duration
	nTTFB, done, failed, lastEnd atomic.Int64
	firstMu                      sync.Mutex
	res                          *result
}

// fail counts a failed stream, keeping the first error.
func (lt *loadTally) fail(err error) {
	if lt.failed.Add(1) == 1 {
		lt.firstMu.Lock()
		lt.res.FirstFailed = err.Error()
		lt.firstMu.Unlock()
	}
}

// runStreams runs cfg.Streams clients, each streaming one request after
// another until cfg.Duration has passed, checking every response.
func runStreams(ctx context.Context, cfg config, chk *checker, addr string, req []byte, lt *loadTally) {
	deadline := lt.res.start.Add(cfg.Duration)
	var wg sync.WaitGroup
	for range cfg.Streams {
		wg.Go(func() {
			buf := make([]byte, 0, len(cfg.Golden)+4096)
			for time.Now().Before(deadline) && ctx.Err() == nil {
				got, first, err := stream(ctx, addr, req, buf)
				lt.lastEnd.Store(int64(time.Since(lt.res.start)))
				if err == nil {
					err = chk.check(got)
				}
				if err != nil {
					lt.fail(err)
					continue
				}
				if i := lt.nTTFB.Add(1) - 1; i < maxTTFB {
					lt.ttfb[i] = first
				}
				lt.done.Add(1)
			}
		})
	}
	wg.Wait()
}

// sampleMemory samples the process's memory every cfg.Sample until ctx
// ends, logging each sample.
func sampleMemory(ctx context.Context, cfg config, res *result, done *atomic.Int64) {
	t := time.NewTicker(cfg.Sample)
	defer t.Stop()
	take := func() {
		if cfg.GC {
			runtime.GC()
		}
		s := readMem(time.Since(res.start), done.Load())
		res.Samples = append(res.Samples, s)
		fmt.Fprintf(cfg.Log, "t=%5.1fs streams=%-7d heap_live=%6.1fMB heap_inuse=%6.1fMB rss=%6.1fMB goroutines=%d\n",
			s.At.Seconds(), s.Streams, mb(s.HeapLive), mb(s.HeapInUse), mb(s.RSS), s.Goroutines)
	}
	take()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			take()
		}
	}
}

// checkAttempts checks that the mock saw every attempt end with the whole
// golden response.
func checkAttempts(res *result, attempts []mock.ServerAttempt, golden int) error {
	res.Attempts = len(attempts)
	for _, a := range attempts {
		if a.Status != 200 || a.Bytes != int64(golden) || a.Ended.IsZero() {
			return fmt.Errorf("mock attempt %d: status %d, %d bytes, ended %v; want 200, %d bytes, ended",
				a.N, a.Status, a.Bytes, !a.Ended.IsZero(), golden)
		}
	}
	return nil
}

// stream sends req on a fresh connection to addr and reads the response to
// EOF into buf. It returns the bytes and the time from dialing to the first
// response byte.
func stream(ctx context.Context, addr string, req, buf []byte) ([]byte, time.Duration, error) {
	start := time.Now()
	d := net.Dialer{Timeout: streamTimeout}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(start.Add(streamTimeout))
	if _, err := c.Write(req); err != nil {
		return nil, 0, fmt.Errorf("write: %w", err)
	}
	buf = buf[:0]
	var first time.Duration
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, 4096)
		}
		n, err := c.Read(buf[len(buf):cap(buf)])
		if n > 0 && first == 0 {
			first = time.Since(start)
		}
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, first, nil
		}
		if err != nil {
			return nil, 0, fmt.Errorf("read after %d bytes: %w", len(buf), err)
		}
	}
}

var memMetrics = []metrics.Sample{
	{Name: "/gc/heap/live:bytes"},
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/sched/goroutines:goroutines"},
}

// readMem samples the process's memory. It is called from one goroutine.
func readMem(at time.Duration, streams int64) sample {
	metrics.Read(memMetrics)
	return sample{At: at, Streams: streams, HeapLive: memMetrics[0].Value.Uint64(),
		HeapInUse: memMetrics[1].Value.Uint64(), Goroutines: memMetrics[2].Value.Uint64(), RSS: rss()}
}

// rss reads the resident set size from /proc/self/status (Linux); 0 elsewhere.
func rss() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }
