package analyze

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/retrylab/retrylab/trace"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// randomIssue9Corpus writes random traces holding every event type the
// issue 9 figures read, over few runs, tickets, models and messages, split
// across files so that workers merge; it returns the paths and all lines.
func randomIssue9Corpus(t *testing.T, rng *rand.Rand) ([]string, []string) {
	dir := t.TempDir()
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	var paths, all []string
	for f := range 1 + rng.IntN(4) {
		var b strings.Builder
		for range rng.IntN(300) {
			run := fmt.Sprintf("r%d", rng.IntN(6))
			ticket := fmt.Sprintf("t%d", rng.IntN(8))
			ts := fmt.Sprintf("2026-11-21T10:%02d:%02d.000Z", rng.IntN(60), rng.IntN(60))
			var typ, payload string
			switch rng.IntN(14) {
			case 0, 1:
				typ = trace.TypeProviderRequestFinished
				payload = fmt.Sprintf(`{"provider":"p","model":%q,"durationMs":%d,"success":%v,"retries":%d}`,
					pick("a", "b", "c"), rng.IntN(70000), rng.IntN(3) > 0, rng.IntN(14))
			case 2, 3:
				typ = trace.TypeRetryAttempt
				payload = fmt.Sprintf(`{"model":%q,"errorMessage":%q,"willRetry":%v,"delayMs":%d,"errorContext":%v}`,
					pick("a", "b", ""), fmt.Sprintf(pick("rate limited %d", "HTTP %d", "req_%dz gone", "plain"), rng.IntN(1000)),
					rng.IntN(2) == 0, rng.IntN(3000), rng.IntN(4) == 0)
			case 4:
				typ = trace.TypeRepairAttempted
				payload = fmt.Sprintf(`{"iteration":%d}`, rng.IntN(14))
			case 5:
				typ = pick(trace.TypeJudgeInvoked, trace.TypeJudgeDecided, trace.TypeDiagnosisStarted, trace.TypeDiagnosisCompleted)
				payload = `{}`
			case 6:
				typ = trace.TypeCandidateGenerated
				payload = fmt.Sprintf(`{"valid":%v}`, rng.IntN(3) > 0)
			case 7:
				typ = trace.TypeVerificationFinished
				payload = fmt.Sprintf(`{"passed":%v}`, rng.IntN(2) == 0)
			case 8:
				typ = trace.TypeRunStopped
				payload = fmt.Sprintf(`{"reason":%q}`, pick("budget", "non_improving", ""))
			case 9:
				typ = trace.TypeRunEscalated
				payload = fmt.Sprintf(`{"from":%q,"to":%q}`, pick("L2", "a"), pick("L3", "b"))
			case 10, 11:
				typ = trace.TypeRetryDecision
				payload = fmt.Sprintf(`{"ticketId":%q,"category":%q,"currentAttempt":%d,"shouldRetry":%v,"nextDelayMs":%d}`,
					ticket, pick("transient", "api_error"), rng.IntN(4), rng.IntN(2) == 0, rng.IntN(100000))
			case 12:
				typ = trace.TypeTicketTransition
				payload = fmt.Sprintf(`{"ticketId":%q,"event":%q,"to":%q}`, ticket, pick("retry", "succeed", "hold"), pick("ready", "needs_review", "on_hold"))
			default:
				typ = pick(trace.TypeErrorReport, trace.TypeEscalationDeclined)
				payload = fmt.Sprintf(`{"failureType":%q,"category":%q,"reason":%q,"why":%q}`, pick("a", "b"), pick("c", ""), pick("d", "e"), pick("f", ""))
			}
			line := fmt.Sprintf(`{"v":1,"ts":%q,"type":%q,"runId":%q,"payload":%s}`, ts, typ, run, payload)
			b.WriteString(line + "\n")
			all = append(all, line)
		}
		p := filepath.Join(dir, fmt.Sprintf("f%d.jsonl", f))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths, all
}

// refIssue9 is the independent reference: encoding/json, plain maps, sorts.
type refIssue9 struct {
	retries                            map[string]int64
	failedOnce, recovered              int64
	ttr                                []int64
	l3, judged, escalated              map[string]bool
	repairMax, repairs                 map[string]int64
	hasIter                            map[string]bool
	judge, cand, valid, verif, passed  int64
	stopped                            map[string]int64
	tickets                            map[string]*refTicket
	decisions                          int64
	delays                             []int64
	transitions                        int64
	byEvent, byTo                      map[string]int64
	reports, declined, errCtx          int64
	repType, repCat, decReason, decWhy map[string]int64
	messages                           map[string]int64
	messagesByModel                    map[string]map[string]int64
}

type refTicket struct {
	cat                     string
	hasCat                  bool
	catAttempt              int64
	catTS                   string
	retried, succeeded, has bool
	attempt                 int64
	ts                      string
	lastRetry               bool
}

func reference(lines []string) *refIssue9 {
	r := &refIssue9{retries: map[string]int64{}, l3: map[string]bool{}, judged: map[string]bool{}, escalated: map[string]bool{},
		repairMax: map[string]int64{}, repairs: map[string]int64{}, hasIter: map[string]bool{}, stopped: map[string]int64{},
		tickets: map[string]*refTicket{}, byEvent: map[string]int64{}, byTo: map[string]int64{},
		repType: map[string]int64{}, repCat: map[string]int64{}, decReason: map[string]int64{}, decWhy: map[string]int64{},
		messages: map[string]int64{}, messagesByModel: map[string]map[string]int64{}}
	unk := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	for _, l := range lines {
		var ev struct {
			TS, Type, RunID string
			Payload         map[string]any
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			panic(err)
		}
		p := ev.Payload
		s := func(k string) string { v, _ := p[k].(string); return v }
		n := func(k string) int64 { v, _ := p[k].(float64); return int64(v) }
		b := func(k string) bool { v, _ := p[k].(bool); return v }
		tk := func() *refTicket {
			t := r.tickets[s("ticketId")]
			if t == nil {
				t = &refTicket{}
				r.tickets[s("ticketId")] = t
			}
			return t
		}
		switch ev.Type {
		case trace.TypeProviderRequestFinished:
			k := fmt.Sprint(min(n("retries"), 10))
			if k == "10" {
				k = "10+"
			}
			r.retries[k]++
			if n("retries") > 0 || !b("success") {
				r.failedOnce++
			}
			if n("retries") > 0 && b("success") {
				r.recovered++
				r.ttr = append(r.ttr, n("durationMs"))
			}
		case trace.TypeRetryAttempt:
			if b("errorContext") {
				r.errCtx++
			}
			m := NormalizeMessage(s("errorMessage"))
			r.messages[m]++
			if r.messagesByModel[s("model")] == nil {
				r.messagesByModel[s("model")] = map[string]int64{}
			}
			r.messagesByModel[s("model")][m]++
		case trace.TypeRepairAttempted:
			r.repairs[ev.RunID]++
			r.repairMax[ev.RunID] = max(r.repairMax[ev.RunID], n("iteration"))
			r.hasIter[ev.RunID] = true
		case trace.TypeJudgeInvoked:
			r.judge++
			r.judged[ev.RunID], r.l3[ev.RunID] = true, true
		case trace.TypeJudgeDecided, trace.TypeDiagnosisStarted, trace.TypeDiagnosisCompleted:
			r.l3[ev.RunID] = true
		case trace.TypeCandidateGenerated:
			r.l3[ev.RunID] = true
			r.cand++
			if b("valid") {
				r.valid++
			}
		case trace.TypeVerificationFinished:
			r.verif++
			if b("passed") {
				r.passed++
			}
		case trace.TypeRunStopped:
			r.stopped[unk(s("reason"))]++
		case trace.TypeRunEscalated:
			r.escalated[ev.RunID] = true
			if s("to") == "L3" {
				r.l3[ev.RunID] = true
			}
		case trace.TypeRetryDecision:
			r.decisions++
			t := tk()
			c, a := s("category"), n("currentAttempt")
			if !t.hasCat || a < t.catAttempt || a == t.catAttempt && (ev.TS < t.catTS || ev.TS == t.catTS && c < t.cat) {
				t.hasCat, t.catAttempt, t.catTS, t.cat = true, a, ev.TS, c
			}
			if b("shouldRetry") {
				r.delays = append(r.delays, n("nextDelayMs"))
				t.retried = true
			}
			if a := n("currentAttempt"); !t.has || a > t.attempt || a == t.attempt && (ev.TS > t.ts || ev.TS == t.ts && !b("shouldRetry")) {
				t.has, t.attempt, t.ts, t.lastRetry = true, a, ev.TS, b("shouldRetry")
			}
		case trace.TypeTicketTransition:
			r.transitions++
			r.byEvent[s("event")]++
			r.byTo[s("to")]++
			t := tk()
			if s("event") == "succeed" || s("to") == "needs_review" {
				t.succeeded = true
			} else if s("event") == "retry" {
				t.retried = true
			}
		case trace.TypeErrorReport:
			r.reports++
			r.repType[unk(s("failureType"))]++
			r.repCat[unk(s("category"))]++
		case trace.TypeEscalationDeclined:
			r.declined++
			r.decReason[unk(s("reason"))]++
			r.decWhy[unk(s("why"))]++
		}
	}
	return r
}

func nearestRank(v []int64, q float64) int64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[max(int(math.Ceil(q*float64(len(v))))-1, 0)]
}

func sortedIDs(m map[string]bool) []string {
	var ids []string
	for k, ok := range m {
		if ok {
			ids = append(ids, k)
		}
	}
	slices.Sort(ids)
	if ids == nil {
		ids = []string{}
	}
	return ids
}

// TestAnalyzeIssue9Reference compares every issue 9 figure with the
// reference on random corpora, with 1 and 3 workers.
func TestAnalyzeIssue9Reference(t *testing.T) {
	t.Parallel()
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 9))
		paths, lines := randomIssue9Corpus(t, rng)
		ref := reference(lines)
		for _, workers := range []int{1, 3} {
			an, err := Run(context.Background(), paths, Options{Workers: workers, Alerts: DefaultAlerts()})
			if err != nil {
				t.Fatal(err)
			}
			fail := func(what string, want, got any) {
				t.Helper()
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
					t.Errorf("seed %d, %d workers: %s (-ref +got):\n%s", seed, workers, what, diff)
				}
			}
			retries := map[string]int64{}
			for _, bk := range an.Requests.RetriesPerRequest {
				if bk.Count > 0 {
					retries[bk.Value] = bk.Count
				}
			}
			fail("retriesPerRequest", ref.retries, retries)
			var ttrSum int64
			for _, v := range ref.ttr {
				ttrSum += v
			}
			fail("recovery", Recovery{FailedOnce: ref.failedOnce, Recovered: ref.recovered,
				Rate: ratio(float64(ref.recovered), float64(ref.failedOnce)),
				TimeToRecoveryMs: RecoveryTimes{Count: int64(len(ref.ttr)), Mean: ratio(float64(ttrSum), float64(len(ref.ttr))),
					P50: nearestRank(ref.ttr, 0.5), P90: nearestRank(ref.ttr, 0.9), P99: nearestRank(ref.ttr, 0.99), Max: nearestRank(ref.ttr, 1)}},
				an.Recovery)
			o := an.Orchestrator
			judgedL3 := 0
			for id := range ref.l3 {
				if ref.judged[id] {
					judgedL3++
				}
			}
			fail("l3/judge runs", [2]int{len(ref.l3), judgedL3}, [2]int{o.L3Runs, o.JudgeRuns})
			fail("counts", []int64{ref.judge, ref.cand, ref.valid, ref.verif, ref.passed},
				[]int64{o.JudgeInvocations, o.Candidates, o.ValidCandidates, o.Verifications, o.VerificationsPassed})
			fail("runStopped", ref.stopped, o.RunStoppedByReason)
			esc := sortedIDs(ref.escalated)
			fail("escalatedRuns", IDList{Count: int64(len(esc)), IDs: esc}, o.EscalatedRuns)
			iters := map[string]int64{}
			above := map[string]bool{}
			for id := range ref.repairs {
				it := ref.repairMax[id]
				k := fmt.Sprint(min(it, 10))
				if k == "10" {
					k = "10+"
				}
				iters[k]++
				above[id] = it > 3
			}
			gotIters := map[string]int64{}
			for _, bk := range o.RepairIterations.Distribution {
				if bk.Count > 0 {
					gotIters[bk.Value] = bk.Count
				}
			}
			fail("repair iterations", iters, gotIters)
			ab := sortedIDs(above)
			fail("runs above", IDList{Count: int64(len(ab)), IDs: ab}, o.RepairIterations.Above)

			tk := an.Tickets
			var retried, succ, withDec int
			byCat := map[string]int64{}
			exh := map[string]bool{}
			for id, rt := range ref.tickets {
				if rt.has {
					withDec++
					exh[id] = !rt.lastRetry
				}
				if rt.retried {
					retried++
					c := rt.cat
					if c == "" {
						c = "unknown"
					}
					byCat[c]++
					if rt.succeeded {
						succ++
					}
				}
			}
			ex := sortedIDs(exh)
			fail("tickets", []any{ref.decisions, withDec, retried, byCat, IDList{Count: int64(len(ex)), IDs: ex}, succ, ratio(float64(succ), float64(retried))},
				[]any{tk.Decisions, tk.Tickets, tk.Retried, tk.RetriedByCategory, tk.Exhausted, tk.SucceededAfterRetry, tk.RetrySuccessRate})
			var dsum int64
			for _, v := range ref.delays {
				dsum += v
			}
			fail("ticket delays", Delays{Count: int64(len(ref.delays)), Total: dsum, P50: nearestRank(ref.delays, 0.5),
				P90: nearestRank(ref.delays, 0.9), P99: nearestRank(ref.delays, 0.99), Max: nearestRank(ref.delays, 1)}, tk.DelayMs)
			var hsum int64
			for _, c := range an.TicketDelayHist.Counts {
				hsum += c
			}
			fail("ticket histogram count and sum", []int64{int64(len(ref.delays)), dsum}, []int64{hsum, an.TicketDelayHist.SumMs})
			fail("transitions", []any{ref.transitions, ref.byEvent, ref.byTo}, []any{tk.Transitions, tk.TransitionsByEvent, tk.TransitionsByTo})
			rc := an.RetryCore
			fail("retry core", []any{ref.reports, ref.repType, ref.repCat, ref.declined, ref.decReason, ref.decWhy, ref.errCtx},
				[]any{rc.ErrorReports, rc.ErrorReportsByFailureType, rc.ErrorReportsByCategory, rc.EscalationsDeclined,
					rc.EscalationsDeclinedByReason, rc.EscalationsDeclinedByWhy, rc.ErrorContextRetries})
			// Messages: the top ones and the rest, overall and per model.
			checkTop := func(what string, m map[string]int64, k int, top []MessageCount, other int64) {
				var all []MessageCount
				var total int64
				for msg, c := range m {
					all = append(all, MessageCount{msg, c})
					total += c
				}
				slices.SortFunc(all, func(x, y MessageCount) int {
					if x.Count != y.Count {
						return int(y.Count - x.Count)
					}
					return strings.Compare(x.Message, y.Message)
				})
				all = all[:min(k, len(all))]
				var shown int64
				for _, mc := range all {
					shown += mc.Count
				}
				fail(what, []any{all, total - shown}, []any{top, other})
			}
			checkTop("top messages", ref.messages, TopMessages, an.ErrorMessages.Top, an.ErrorMessages.Other)
			fail("models", len(ref.messagesByModel), len(an.ErrorMessages.ByModel))
			for _, mm := range an.ErrorMessages.ByModel {
				checkTop("messages of "+mm.Model, ref.messagesByModel[mm.Model], TopModelMessages, mm.Top, mm.Other)
			}
		}
	}
}
