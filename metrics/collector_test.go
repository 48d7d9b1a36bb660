package metrics_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/retrylab/retrylab/metrics"
	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/preset"
	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
	"github.com/retrylab/retrylab/trace/analyze"
)

// figures are what both trace analyze and the Collector count, keyed the
// same way so that one cmp.Diff compares them.
type figures struct {
	Requests, WithRetries, Failed, Retries int64
	ByGroup                                map[string][4]int64 // provider/model → requests, with retries, failed, retries
	ByFailureType, ByStatus                map[string]int64
	DelayBuckets                           [len(analyze.HistogramBoundsMs) + 1]int64
	DelaySumMs                             int64
	ByPath, ByReason                       map[string]int64
	Steps, Diagnoses, L2Runs, L2Escalated  int64
	RepairRuns, RepairIterations           int64
}

// analyzed counts the figures of trace analyze of file.
func analyzed(t *testing.T, file string) figures {
	t.Helper()
	a, err := analyze.Run(context.Background(), []string{file}, analyze.Options{By: []string{"provider", "model"}})
	if err != nil {
		t.Fatal(err)
	}
	f := figures{
		Requests: a.Requests.Total, WithRetries: a.Requests.WithRetries, Failed: a.Requests.Failed, Retries: a.Requests.Retries,
		ByGroup: map[string][4]int64{}, ByFailureType: a.Attempts.ByFailureType, ByStatus: a.Attempts.ByStatus,
		DelayBuckets: a.DelayHist.Counts, DelaySumMs: a.DelayHist.SumMs,
		ByPath: map[string]int64{}, ByReason: a.Escalations.ByReason,
		Steps: a.Counts.StepFinished, Diagnoses: a.Counts.DiagnosisStarted,
		L2Runs: int64(a.Counts.L2Runs), L2Escalated: int64(a.Counts.L2EscalatedRuns),
		RepairRuns: int64(a.Counts.RepairRuns), RepairIterations: a.Counts.RepairIterations,
	}
	for _, g := range a.Groups {
		f.ByGroup[g.Keys["provider"]+"/"+g.Keys["model"]] = [4]int64{g.Total, g.WithRetries, g.Failed, g.Retries}
	}
	for _, p := range a.Escalations.ByPath {
		f.ByPath[p.From+"→"+p.To] = p.Count
	}
	return f
}

// collected counts the same figures from what c exports.
func collected(t *testing.T, c *metrics.Collector) figures {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	f := figures{ByGroup: map[string][4]int64{}, ByFailureType: map[string]int64{}, ByStatus: map[string]int64{},
		ByPath: map[string]int64{}, ByReason: map[string]int64{}}
	group := func(m *dto.Metric, i int) {
		k := label(m, "provider") + "/" + label(m, "model")
		g := f.ByGroup[k]
		g[i] += int64(m.GetCounter().GetValue())
		f.ByGroup[k] = g
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			v := int64(m.GetCounter().GetValue())
			switch mf.GetName() {
			case metrics.MetricRequests:
				f.Requests += v
				group(m, 0)
			case metrics.MetricRequestsWithRetries:
				f.WithRetries += v
				group(m, 1)
			case metrics.MetricRequestsFailed:
				f.Failed += v
				group(m, 2)
			case metrics.MetricRetries:
				f.Retries += v
				group(m, 3)
			case metrics.MetricFailedAttempts:
				f.ByFailureType[label(m, "failure_type")] += v
				if s := label(m, "status"); s != "none" {
					f.ByStatus[s] += v
				}
			case metrics.MetricRetryDelay:
				h := m.GetHistogram()
				var prev uint64
				for i, b := range h.GetBucket() {
					f.DelayBuckets[i] += int64(b.GetCumulativeCount() - prev)
					prev = b.GetCumulativeCount()
				}
				f.DelayBuckets[len(analyze.HistogramBoundsMs)] += int64(h.GetSampleCount() - prev)
				f.DelaySumMs += int64(h.GetSampleSum()*1000 + 0.5)
			case metrics.MetricEscalations:
				f.ByPath[label(m, "from")+"→"+label(m, "to")] += v
				f.ByReason[label(m, "reason")] += v
			case metrics.MetricStepsFinished:
				f.Steps = v
			case metrics.MetricDiagnosesStarted:
				f.Diagnoses = v
			case metrics.MetricL2Runs:
				f.L2Runs = v
			case metrics.MetricL2RunsEscalated:
				f.L2Escalated = v
			case metrics.MetricRepairIterations:
				f.RepairRuns, f.RepairIterations = int64(m.GetSummary().GetSampleCount()), int64(m.GetSummary().GetSampleSum())
			}
		}
	}
	return f
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// randomEvents writes n random events of the types the Collector counts
// (and some it does not) through w.
func randomEvents(w *trace.Writer, rng *rand.Rand, n int) {
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	for range n {
		switch rng.IntN(9) {
		case 0, 1:
			w.Emit(trace.TypeProviderRequestFinished, trace.ProviderRequestFinished{
				Provider: pick("anthropic", "openai", ""), Model: pick("haiku", "sonnet", "gpt"),
				DurationMs: rng.Int64N(5000), Success: rng.IntN(4) > 0, Retries: rng.IntN(5) - 1,
				FailureType: pick("", "overloaded", "timeout")})
		case 2, 3:
			w.Emit(trace.TypeRetryAttempt, trace.RetryAttempt{
				Provider: pick("anthropic", "openai"), Model: pick("haiku", "sonnet"),
				FailureType: pick("", "overloaded", "rate_limit", "timeout"), Status: []int{0, 429, 500, 529}[rng.IntN(4)],
				WillRetry: rng.IntN(3) > 0, DelayMs: []int64{-5, 0, 100, 101, 250, 999, 64000, 90000}[rng.IntN(8)] + rng.Int64N(2)})
		case 4:
			w.Emit(trace.TypeRunEscalated, trace.RunEscalated{From: pick("L1", "L2", "l2", "haiku"), To: pick("L2", "L3", "sonnet"), Reason: pick("", "budget", "stuck")})
		case 5:
			w.Emit(trace.TypeRepairAttempted, repair(rng))
		case 6:
			w.Emit(pick(trace.TypeIterationStarted, trace.TypeRunStarted, trace.TypeJudgeInvoked), struct{}{})
		case 7:
			w.Emit(trace.TypeStepFinished, struct{}{})
		case 8:
			w.Emit(trace.TypeDiagnosisStarted, struct{}{})
		}
	}
}

// repair is a RepairAttempted payload, with an iteration or without one.
func repair(rng *rand.Rand) any {
	if rng.IntN(3) == 0 {
		return struct{}{}
	}
	return map[string]int{"iteration": rng.IntN(6) - 1}
}

// TestCollectorMatchesAnalyze writes random event streams (several runs,
// events interleaved) once to a trace file and, through Writer.Observe, to
// a Collector: the Collector's figures are those of trace analyze of the
// file.
func TestCollectorMatchesAnalyze(t *testing.T) {
	for seed := range uint64(30) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 23))
			file := filepath.Join(t.TempDir(), "trace.jsonl")
			out, err := os.Create(file)
			if err != nil {
				t.Fatal(err)
			}
			c := metrics.New(metrics.Options{})
			var ws []*trace.Writer
			for i := range 1 + rng.IntN(4) {
				w := trace.NewWriter(out, fmt.Sprintf("r-%d", i))
				w.Observe(c)
				ws = append(ws, w)
			}
			for range 20 {
				randomEvents(ws[rng.IntN(len(ws))], rng, rng.IntN(30))
			}
			out.Close()
			if diff := cmp.Diff(analyzed(t, file), collected(t, c)); diff != "" {
				t.Errorf("figures mismatch (-analyze +collector):\n%s", diff)
			}
		})
	}
}

// TestCollectorRetryCore counts what the retry core itself writes: a
// Retrier whose trace.Writer the Collector observes, on a fake clock.
func TestCollectorRetryCore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "trace.jsonl")
		tw, err := trace.Create(file, "r-core")
		if err != nil {
			t.Fatal(err)
		}
		c := metrics.New(metrics.Options{})
		tw.Observe(c)
		p, err := preset.Get("forgeflare")
		if err != nil {
			t.Fatal(err)
		}
		statuses := []int{529, 429, 500, 200}
		for req := range 6 {
			r := &retry.Retrier{Policy: p, Provider: "anthropic", Model: "claude-haiku-4-5", Trace: tw,
				Rand: rand.New(rand.NewPCG(uint64(req), 1))}
			_ = r.Do(t.Context(), func(ctx context.Context, a retry.Attempt) error {
				s := statuses[(req+a.Number-1)%len(statuses)]
				if req == 5 || s != 200 && a.Number <= req%3+1 {
					return &provider.Error{Kind: provider.KindHTTP, Provider: "anthropic", Status: max(s, 529), Message: "busy"}
				}
				return nil
			})
		}
		tw.Close()
		got, want := collected(t, c), analyzed(t, file)
		if got.Requests != 6 || got.Failed == 0 || got.WithRetries == 0 {
			t.Errorf("the retry core's run has %d requests, %d failed, %d with retries: want 6, some, some", got.Requests, got.Failed, got.WithRetries)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("figures mismatch (-analyze +collector):\n%s", diff)
		}
	})
}

// TestCollectorLabelCap: hostile provider and model strings (many, long,
// not UTF-8) stay within the cap, the rest counted as "other", and nothing
// is lost from the totals.
func TestCollectorLabelCap(t *testing.T) {
	c := metrics.New(metrics.Options{MaxValues: 3})
	w := trace.NewWriter(nopWriter{}, "r")
	w.Observe(c)
	for i := range 10 {
		w.Emit(trace.TypeProviderRequestFinished, trace.ProviderRequestFinished{
			Provider: fmt.Sprintf("p%d\xff", i), Model: fmt.Sprintf("m%d-%0300d", i, 0), Success: true})
	}
	f := collected(t, c)
	if f.Requests != 10 {
		t.Errorf("requests = %d, want 10", f.Requests)
	}
	if len(f.ByGroup) != 4 || f.ByGroup["other/other"][0] != 7 {
		t.Errorf("groups = %v, want 3 kept and other/other with 7", f.ByGroup)
	}
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// TestCollectorSeriesStartTogether: a provider and model's first request
// creates all four of its request series, at 0 where it counts nothing,
// so that a rate's numerator exists whenever its denominator does.
func TestCollectorSeriesStartTogether(t *testing.T) {
	c := metrics.New(metrics.Options{})
	c.ObserveEvent(trace.Event{Type: trace.TypeProviderRequestFinished, Payload: []byte(`{"provider":"p","model":"m","success":true}`)})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if label(m, "provider") == "p" {
				got[mf.GetName()] = m.GetCounter().GetValue()
			}
		}
	}
	want := map[string]float64{metrics.MetricRequests: 1, metrics.MetricRequestsWithRetries: 0,
		metrics.MetricRequestsFailed: 0, metrics.MetricRetries: 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("series mismatch (-want +got):\n%s", diff)
	}
}
