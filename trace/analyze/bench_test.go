package analyze

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchCorpus writes files trace files of perFile events each, with the mix
// of bench/gen in miniature, and returns their paths and total size.
func benchCorpus(b *testing.B, files, perFile int) ([]string, int64) {
	b.Helper()
	dir := b.TempDir()
	var paths []string
	var size int64
	for i := range files {
		p := filepath.Join(dir, fmt.Sprintf("run-%03d", i), "trace.jsonl")
		os.MkdirAll(filepath.Dir(p), 0o755)
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriter(f)
		for n := range perFile {
			run := fmt.Sprintf("r-%03d", i)
			switch n % 10 {
			case 0, 1, 2, 3, 4, 5:
				fmt.Fprintf(w, `{"v":1,"ts":"2026-11-21T10:00:00.123Z","type":"ProviderRequestFinished","runId":"%s","payload":{"provider":"anthropic","model":"claude-haiku-4-5","durationMs":%d,"success":true,"retries":%d,"requestId":"req_%08x"}}`+"\n", run, 400+n%3000, n%3, n)
			case 6, 7:
				fmt.Fprintf(w, `{"v":1,"ts":"2026-11-21T10:00:00.123Z","type":"RetryAttempt","runId":"%s","payload":{"provider":"anthropic","model":"claude-haiku-4-5","attempt":1,"maxAttempts":4,"failureType":"overloaded","status":529,"errorMessage":"overloaded error from upstream","willRetry":true,"delayMs":%d,"delaySource":"backoff"}}`+"\n", run, 1000+n%500)
			case 8:
				fmt.Fprintf(w, `{"v":1,"ts":"2026-11-21T10:00:00.123Z","type":"RepairAttempted","runId":"%s","payload":{"iteration":%d}}`+"\n", run, n%5)
			default:
				fmt.Fprintf(w, `{"v":1,"ts":"2026-11-21T10:00:00.123Z","type":"StepFinished","runId":"%s","payload":{"judge":false}}`+"\n", run)
			}
		}
		w.Flush()
		fi, _ := f.Stat()
		size += fi.Size()
		f.Close()
		paths = append(paths, p)
	}
	return paths, size
}

// BenchmarkAnalyze measures the whole analysis of 200k events in 20 files;
// run it with -cpu 1,2,4 to see throughput grow with cores.
func BenchmarkAnalyze(b *testing.B) {
	paths, size := benchCorpus(b, 20, 10_000)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(context.Background(), paths, Options{Alerts: DefaultAlerts()}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(paths)*10_000)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkAnalyzeCorpus analyses the folder named by RETRYLAB_BENCH_CORPUS
// (bench/gen writes one; bench/run.sh uses the same), to profile the real
// mix: go test -run '^$' -bench AnalyzeCorpus -cpuprofile cpu.out ./trace/analyze
func BenchmarkAnalyzeCorpus(b *testing.B) {
	dir := os.Getenv("RETRYLAB_BENCH_CORPUS")
	if dir == "" {
		b.Skip("RETRYLAB_BENCH_CORPUS is not set")
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*", "trace.jsonl"))
	if err != nil || len(paths) == 0 {
		b.Fatalf("no */trace.jsonl in %s", dir)
	}
	var size int64
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			size += fi.Size()
		}
	}
	b.SetBytes(size)
	for b.Loop() {
		if _, err := Run(context.Background(), paths, Options{Alerts: DefaultAlerts()}); err != nil {
			b.Fatal(err)
		}
	}
}
