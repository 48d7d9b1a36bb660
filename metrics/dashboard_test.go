package metrics_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/metrics"
)

const dashboardFile = "../docs/grafana/retrylab.json"

// dashboardExprs returns every PromQL expression of the Grafana dashboard:
// its panels' targets and its template variables' label_values queries.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var exprs []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if q, ok := v.Query.(map[string]any); ok && v.Type == "query" {
			s, _ := q["query"].(string)
			// label_values(SELECTOR, label) is Grafana's, not PromQL: the
			// selector is.
			if m := regexp.MustCompile(`^label_values\((.*), *\w+\)$`).FindStringSubmatch(s); m != nil {
				s = m[1]
			}
			exprs = append(exprs, s)
		}
	}
	if d.Title == "" || len(exprs) == 0 {
		t.Fatalf("%s: no title or no queries", dashboardFile)
	}
	return exprs
}

// exported are the series names the Collector exports.
func exported() map[string]bool {
	out := map[string]bool{}
	for _, n := range metrics.Names {
		switch n {
		case metrics.MetricRetryDelay:
			out[n+"_bucket"], out[n+"_sum"], out[n+"_count"] = true, true, true
		case metrics.MetricRepairIterations:
			out[n], out[n+"_sum"], out[n+"_count"] = true, true, true
		default:
			out[n] = true
		}
	}
	return out
}

var (
	quoted    = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	matchers  = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]|\b(?:by|without) *\([^)]*\)`)
	funcCall  = regexp.MustCompile(`\b[a-z_]+ *\(`)
	ident     = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	grafanaVs = strings.NewReplacer("$__rate_interval", "5m", "$__range", "1h", "$__interval", "1m", "$provider", ".*", "$model", ".*")
)

// TestDashboardUsesExportedMetrics: every metric a query of the dashboard
// reads is one the Collector exports.
func TestDashboardUsesExportedMetrics(t *testing.T) {
	ok := exported()
	for _, e := range dashboardExprs(t) {
		rest := funcCall.ReplaceAllString(matchers.ReplaceAllString(quoted.ReplaceAllString(e, `""`), " "), " (")
		names := ident.FindAllString(rest, -1)
		if len(names) == 0 {
			t.Errorf("query %q reads no metric", e)
		}
		for _, n := range names {
			if !ok[n] {
				t.Errorf("query %q reads %s, which the Collector does not export", e, n)
			}
		}
	}
}

// TestDashboardPromQL: promtool parses every query of the dashboard (as a
// recording rule, with Grafana's variables given values).
func TestDashboardPromQL(t *testing.T) {
	tool := promtool(t)
	var rules []map[string]string
	for i, e := range dashboardExprs(t) {
		rules = append(rules, map[string]string{"record": fmt.Sprintf("dashboard:query_%d", i), "expr": grafanaVs.Replace(e)})
	}
	data, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "dashboard.yml")
	write(t, file, data)
	if out, err := exec.Command(tool, "check", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s\n%s", err, out, data)
	}
}
