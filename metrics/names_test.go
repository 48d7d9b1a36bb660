package metrics_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/retrylab/retrylab/metrics"
	"github.com/retrylab/retrylab/report"
	"github.com/retrylab/retrylab/trace"
	"github.com/retrylab/retrylab/trace/analyze"
)

// TestNamesMatchOpenMetrics: every family the Collector exports is a
// family of `trace analyze --format openmetrics`, of the same type, so a
// dashboard or a rule reads either.
func TestNamesMatchOpenMetrics(t *testing.T) {
	file := filepath.Join(t.TempDir(), "trace.jsonl")
	out, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	c := metrics.New(metrics.Options{})
	w := trace.NewWriter(out, "r")
	w.Observe(c)
	randomEvents(w, rand.New(rand.NewPCG(1, 2)), 300)
	out.Close()
	a, err := analyze.Run(context.Background(), []string{file}, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var om bytes.Buffer
	if err := report.AnalysisOpenMetrics(&om, a); err != nil {
		t.Fatal(err)
	}
	omTypes := map[string]string{}
	for _, line := range strings.Split(om.String(), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[1] == "TYPE" {
			omTypes[f[2]] = f[3]
		}
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, mf := range mfs {
		name, typ := mf.GetName(), strings.ToLower(mf.GetType().String())
		seen[name] = true
		fam := name
		if mf.GetType() == dto.MetricType_COUNTER {
			fam = strings.TrimSuffix(name, "_total")
		}
		if omTypes[fam] != typ {
			t.Errorf("Collector's %s (%s): openmetrics has family %s as %q", name, typ, fam, omTypes[fam])
		}
	}
	for _, n := range metrics.Names {
		if !seen[n] {
			t.Errorf("metrics.Names lists %s, which the Collector did not export", n)
		}
	}
}
