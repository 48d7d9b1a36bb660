package otlp

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/plog"
)

// TestCodexUnreported: a 200 that Codex re-sent is never read as a
// success, even when the records that said why are missing (here removed
// from the real captures of TestMappings); a 200 at the end of what
// arrived, with nothing after it, is left as Codex reported it.
func TestCodexUnreported(t *testing.T) {
	sse := func(lr plog.LogRecord) bool { return codexName(lr.Attributes(), "") == "codex.sse_event" }
	tests := []struct {
		name   string
		file   string
		remove func(plog.LogRecord) bool
		want   []string // per attempt: status and Retried
	}{
		{"stream errors, their codex.sse_event records gone", "codex-real-stream-errors-logs.json", sse,
			[]string{"200 true", "200 true", "0 false", "200 false"}},
		{"503, 503, ok, its completion gone", "codex-real-503-503-ok-logs.json", sse,
			[]string{"503 false", "503 false", "200 false"}},
		{"as sent", "codex-real-stream-errors-logs.json", func(plog.LogRecord) bool { return false },
			[]string{"200 false", "200 false", "0 false", "200 false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := readPayload(t, tt.file)
			rls := p.Logs.ResourceLogs()
			for i := 0; i < rls.Len(); i++ {
				sls := rls.At(i).ScopeLogs()
				for j := 0; j < sls.Len(); j++ {
					sls.At(j).LogRecords().RemoveIf(tt.remove)
				}
			}
			reqs, _ := codex{}.Map(Collect([]Payload{p}))
			var got []string
			for _, r := range reqs {
				for _, a := range r.Attempts {
					got = append(got, fmt.Sprintf("%d %v", a.Status, a.Retried))
				}
			}
			if len(reqs) != 1 {
				t.Errorf("%d requests, want 1", len(reqs))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("attempts (-want +got):\n%s", diff)
			}
		})
	}
}
