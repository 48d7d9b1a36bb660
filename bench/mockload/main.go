// Command mockload puts the chaos mock under load: it starts the embedded
// Toxiproxy and the mock behind it (a scenario with no faults, so every
// attempt is a success stream), and runs N concurrent clients that each
// stream one response after another, each over a fresh connection, for a
// while. Every response must equal, byte for byte, the golden success
// stream the mock renders (chaos/mock/testdata/anthropic_ok.golden, pinned by
// TestResponsesGolden) with its own request id and reset time; no attempt
// number may be answered twice. It prints the memory of the process (mock,
// proxy and clients together) once a second, then streams/s, time to first
// byte (from dialing) and the live-heap trend:
//
//	go run ./bench/mockload -streams 500 -duration 30s
//
// It exits 1 when a stream failed or differed, 2 on bad usage or when the
// mock or proxy could not start.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(mainErr(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func mainErr(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mockload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	streams := fs.Int("streams", 500, "concurrent streams")
	duration := fs.Duration("duration", 30*time.Second, "how long new streams are started")
	golden := fs.String("golden", "chaos/mock/testdata/anthropic_ok.golden", "the mock's golden success stream")
	toxi := fs.String("toxiproxy", "", "API URL of a toxiproxy-server (default: embedded)")
	quiet := fs.Bool("q", false, "no line per memory sample")
	gc := fs.Bool("gc", false, "collect garbage before each sample: exact live heap, less throughput")
	direct := fs.Bool("direct", false, "stream straight from the mock, as a scenario without proxy faults is served (default: through the proxy)")
	keep := fs.Int("keep", 0, "keep the first and last N attempt records, as chaos serve does (1000); 0: all")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *streams < 1 || *duration <= 0 || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "error: -streams must be ≥ 1 and -duration > 0, with no arguments")
		fmt.Fprintln(stderr, "hint: go run ./bench/mockload -streams 500 -duration 30s")
		return 2
	}
	g, err := os.ReadFile(*golden)
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\nhint: run from the repository's root, or pass -golden chaos/mock/testdata/anthropic_ok.golden\n", err)
		return 2
	}
	log := stdout
	if *quiet {
		log = io.Discard
	}
	res, err := run(ctx, config{Streams: *streams, Duration: *duration, Golden: g, Toxiproxy: *toxi, Direct: *direct, Log: log, GC: *gc, KeepAttempts: *keep})
	if res == nil {
		fmt.Fprintln(stderr, "error:", err)
		return 2
	}
	report(stdout, *streams, res)
	if err != nil || res.Failed > 0 {
		if err == nil {
			err = errors.New(res.FirstFailed)
		}
		fmt.Fprintf(stderr, "error: %d stream(s) failed or differed; first: %v\n", res.Failed, err)
		return 1
	}
	return 0
}

// report prints the summary of a run.
func report(w io.Writer, streams int, r *result) {
	first, last := r.Samples[0], r.Samples[len(r.Samples)-1]
	warm := r.Elapsed / 5
	sps := r.StreamsPerSec()
	held := r.HeldPerAttempt()
	fmt.Fprintf(w, "concurrency=%d elapsed=%.1fs streams=%d failed=%d mock_attempts=%d streams/s=%.0f\n",
		streams, r.Elapsed.Seconds(), r.Streams, r.Failed, r.Attempts, sps)
	fmt.Fprintf(w, "ttfb p50=%s p99=%s max=%s\n", ms(r.Percentile(0.50)), ms(r.Percentile(0.99)), ms(r.Percentile(1)))
	fmt.Fprintf(w, "heap_live start=%.1fMB at %.0fs=%.1fMB end=%.1fMB (after GC) closed=%.1fMB (Env and proxy closed)\n",
		mb(first.HeapLive), last.At.Seconds(), mb(last.HeapLive), mb(r.End.HeapLive), mb(r.Freed.HeapLive))
	fmt.Fprintf(w, "goroutines before=%d closed=%d\n", r.Before.Goroutines, r.Freed.Goroutines)
	fmt.Fprintf(w, "rss start=%.1fMB at %.0fs=%.1fMB max=%.1fMB\n", mb(first.RSS), last.At.Seconds(), mb(last.RSS), mb(maxRSS(r.Samples)))
	fmt.Fprintf(w, "the Env's attempt records: %.0f B per attempt (freed on close)\n", held)
	fmt.Fprintf(w, "heap_live trend from %.0fs: %+.0f B/s (%+.0f B per stream); less the records: %+.0f B/s\n",
		warm.Seconds(), r.Slope(warm, 0), r.Slope(warm, 0)/max(sps, 1), r.Slope(warm, held))
}

func maxRSS(ss []sample) uint64 {
	var m uint64
	for _, s := range ss {
		m = max(m, s.RSS)
	}
	return m
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }
