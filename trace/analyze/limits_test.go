package analyze

import (
	"context"
	"fmt"
	"github.com/retrylab/retrylab/trace"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func writeTrace(t *testing.T, lines []string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAnalyzeLabelsBounded is a regression test: labels were kept whole,
// so a trace of distinct 1 MB model names, run ids or unknown types grew
// memory by a megabyte each. Long labels are cut (staying distinct), and
// distinct unknown types are counted by name up to a bound.
func TestAnalyzeLabelsBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 50_000)
	req := func(runID, model string) string {
		return fmt.Sprintf(`{"type":"ProviderRequestFinished","runId":%q,"payload":{"provider":"p","model":%q,"success":true}}`, runID, model)
	}
	lines := []string{req(long+"1", long+"a"), req(long+"2", long+"b"), req(long+"2", long+"b"),
		`{"type":"RunStarted","runId":"r\u0031"}`, `{"type":"RunStarted","runId":"r1"}`}
	for i := range maxUnknownTypes + 500 {
		lines = append(lines, fmt.Sprintf(`{"type":"Unknown%d"}`, i))
	}
	an, err := Run(context.Background(), []string{writeTrace(t, lines)}, Options{Workers: 1, By: []string{"model", "run"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(an.Groups) != 2 {
		t.Fatalf("%d groups, want 2 (distinct long models stay distinct)", len(an.Groups))
	}
	for _, g := range an.Groups {
		for d, v := range g.Keys {
			if len(v) > trace.MaxLabelBytes || !utf8.ValidString(v) {
				t.Errorf("%s label of %d bytes (valid UTF-8 %v), want at most %d", d, len(v), utf8.ValidString(v), trace.MaxLabelBytes)
			}
		}
	}
	if an.Groups[0].Keys["model"] == an.Groups[1].Keys["model"] {
		t.Errorf("two long models got one label %q", an.Groups[0].Keys["model"])
	}
	if an.Inputs.Runs != 4 { // two long run ids, r1 however it is escaped, the file (lines without one)
		t.Errorf("%d runs, want 4", an.Inputs.Runs)
	}
	if got := len(an.Inputs.UnknownTypes); got != maxUnknownTypes+1 {
		t.Errorf("%d unknown type keys, want %d", got, maxUnknownTypes+1)
	}
	if got := an.Inputs.UnknownTypes[OtherUnknownTypes]; got != 500 {
		t.Errorf("%s = %d, want 500", OtherUnknownTypes, got)
	}
}

// TestAnalyzeCountsBounded is a regression test: failure types, statuses,
// escalation paths and reasons were counted by name without bound (a
// trace of a million distinct failure types took 600 MB). Past
// maxDistinctCounts distinct keys the rest go to an "(other ...)" key,
// per worker and once merged, and no count is lost.
func TestAnalyzeCountsBounded(t *testing.T) {
	t.Parallel()
	const n = maxDistinctCounts + 700
	var a, b []string
	for i := range n {
		line := fmt.Sprintf(`{"type":"RetryAttempt","runId":"r","payload":{"failureType":"ft%d","status":%d}}`, i, 1000+i) + "\n" +
			fmt.Sprintf(`{"type":"RunEscalated","runId":"r","payload":{"from":"f%d","to":"t","reason":"why%d"}}`, i, i)
		if i%2 == 0 {
			a = append(a, line)
		} else {
			b = append(b, line)
		}
	}
	for _, workers := range []int{1, 2} {
		an, err := Run(context.Background(), []string{writeTrace(t, append(a, b...)), writeTrace(t, append(b, a...))}, Options{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		checks := []struct {
			name  string
			count func() (keys int, sum, other int64)
		}{
			{"byFailureType", func() (int, int64, int64) {
				return len(an.Attempts.ByFailureType), sum(an.Attempts.ByFailureType), an.Attempts.ByFailureType[OtherFailureTypes]
			}},
			{"byStatus", func() (int, int64, int64) {
				return len(an.Attempts.ByStatus), sum(an.Attempts.ByStatus), an.Attempts.ByStatus[OtherStatuses]
			}},
			{"byReason", func() (int, int64, int64) {
				return len(an.Escalations.ByReason), sum(an.Escalations.ByReason), an.Escalations.ByReason[OtherReasons]
			}},
			{"byPath", func() (int, int64, int64) {
				var s, o int64
				for _, p := range an.Escalations.ByPath {
					s += p.Count
					if p.From == OtherPaths {
						o += p.Count
					}
				}
				return len(an.Escalations.ByPath), s, o
			}},
		}
		for _, c := range checks {
			keys, total, other := c.count()
			if keys > maxDistinctCounts+1 || total != 2*n || other < 2*n-2*maxDistinctCounts {
				t.Errorf("workers=%d %s: %d keys, sum %d, other %d; want at most %d keys, sum %d, other at least %d",
					workers, c.name, keys, total, other, maxDistinctCounts+1, 2*n, 2*n-2*maxDistinctCounts)
			}
		}
	}
}

func sum(m map[string]int64) int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}

// TestAnalyzeIssue9Bounded: distinct tickets, messages, models, run ids
// and reasons past their caps keep every map and list bounded, and no
// count is lost: the rest is counted.
func TestAnalyzeIssue9Bounded(t *testing.T) {
	t.Parallel()
	var lines []string
	const tickets = maxTickets + 100
	for i := range tickets {
		lines = append(lines, fmt.Sprintf(`{"type":"RetryDecision","payload":{"ticketId":"t%d","category":"c","shouldRetry":false}}`, i))
	}
	word := func(i int) string { // distinct and digit-free, so normalisation keeps them apart
		var b strings.Builder
		for ; i > 0 || b.Len() == 0; i /= 26 {
			b.WriteByte(byte('a' + i%26))
		}
		return b.String()
	}
	const messages = maxNormCache + 500
	for i := range messages {
		lines = append(lines, fmt.Sprintf(`{"type":"RetryAttempt","runId":"r%d","payload":{"model":"m%s","errorMessage":"boom %s"}}`, i, word(i%(maxMessageModels+7)), word(i)))
		lines = append(lines, fmt.Sprintf(`{"type":"RunEscalated","runId":"r%d","payload":{"from":"a","to":"b"}}`, i))
		lines = append(lines, fmt.Sprintf(`{"type":"RunStopped","runId":"r%d","payload":{"reason":"why %s"}}`, i, word(i)))
	}
	an, err := Run(context.Background(), []string{writeTrace(t, lines)}, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	tk := an.Tickets
	if tk.Decisions != tickets || int64(tk.Tickets)+tk.UntrackedDecisions != tickets || tk.Tickets != maxTickets {
		t.Errorf("tickets: %d decisions, %d followed, %d untracked; want %d, %d, %d", tk.Decisions, tk.Tickets, tk.UntrackedDecisions, tickets, maxTickets, tickets-maxTickets)
	}
	if len(tk.Exhausted.IDs) != MaxListedIDs || tk.Exhausted.Count != maxTickets || tk.Exhausted.More != maxTickets-MaxListedIDs {
		t.Errorf("exhausted: %d ids, count %d, more %d", len(tk.Exhausted.IDs), tk.Exhausted.Count, tk.Exhausted.More)
	}
	em := an.ErrorMessages
	if len(em.Top) != TopMessages || len(em.ByModel) > maxMessageModels+1 {
		t.Errorf("%d top messages, %d models; want %d, at most %d", len(em.Top), len(em.ByModel), TopMessages, maxMessageModels+1)
	}
	sum := em.Other
	for _, m := range em.Top {
		sum += m.Count
	}
	var byModel int64
	for _, mm := range em.ByModel {
		byModel += mm.Total
		if len(mm.Top) > TopModelMessages {
			t.Errorf("model %s: %d messages", mm.Model, len(mm.Top))
		}
	}
	if em.Total != messages || sum != messages || byModel != messages {
		t.Errorf("messages: total %d, top+other %d, by model %d; want %d", em.Total, sum, byModel, messages)
	}
	if len(an.Orchestrator.EscalatedRuns.IDs) != MaxListedIDs || an.Orchestrator.EscalatedRuns.Count != messages {
		t.Errorf("escalated runs: %+v", an.Orchestrator.EscalatedRuns)
	}
	if got := len(an.Orchestrator.RunStoppedByReason); got != maxDistinctCounts+1 {
		t.Errorf("%d RunStopped reasons, want %d", got, maxDistinctCounts+1)
	}
}
