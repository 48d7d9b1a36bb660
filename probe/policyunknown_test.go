package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/retrylab/retrylab/retry"
	"github.com/retrylab/retrylab/retry/policyfile"
)

// interruptedJournal is what a probe stopped by Ctrl-C after a second has
// seen of a client that retries 5xx (hostile report 6): a few decision
// probes finished (503 and 429 retried once, 400 not), every exhaustion
// run and the rest not run.
func interruptedJournal(prov Provider) []Observation {
	var obs []Observation
	for _, f := range prov.Faults {
		o := Observation{Fault: f.Name, End: EndNotRun, Note: "not started: interrupted by SIGINT"}
		switch f.Name {
		case "503", "429":
			o = Observation{Fault: f.Name, Served: 1, Attempts: 2, End: EndSucceeded, WaitsMs: []float64{301}, NoiseMs: 4}
		case "400":
			o = Observation{Fault: f.Name, Served: 1, Attempts: 1, End: EndGaveUp, NoiseMs: 4}
		}
		obs = append(obs, o)
	}
	for s := 1; s <= 4; s++ {
		obs = append(obs, Observation{Fault: prov.Exhaust.Name, Sample: s, End: EndNotRun, Note: "interrupted"})
	}
	return obs
}

// TestPolicyUnknownFigures: a policy written before the retry limit or
// the backoff was learnt writes them `unknown` (not checked), never a
// limit or a wait it did not see; it parses, retries what the profile
// says, allows a retry after any attempt and any wait where it does not
// know, and checks what it knows. (An interrupted probe wrote `all:
// {retry: true}`, which loads as one attempt: delays: policy then failed
// the very client it was learnt from.)
func TestPolicyUnknownFigures(t *testing.T) {
	prov, _ := LookupProvider("anthropic")
	ex := prov.Exhaust.Err
	exType := retry.Classify(&ex).Type
	budget := sdkJournal(prov)
	for i := range budget {
		// --budget too short: every exhaustion run stopped at the deadline
		// after 2 retries, still retrying.
		if budget[i].Fault == prov.Exhaust.Name {
			budget[i].End = EndStopped
		}
	}
	tests := []struct {
		name         string
		obs          []Observation
		want, absent []string
		waitsKnown   bool
	}{
		{"interrupted after a second", interruptedJournal(prov),
			[]string{"all: {retry: true, maxRetries: unknown, initialDelay: unknown}", "# maxRetries: unknown: not checked", "at least 1 retry seen", "# initialDelay: unknown", "503: true", "400: false"},
			[]string{", multiplier:", ", jitter:"}, false},
		{"--budget too short for the limit", budget,
			[]string{"maxRetries: unknown, initialDelay: 500ms, kind: exponential, multiplier: 2", "jitter: sdk", "at least 2 retries seen"},
			[]string{"initialDelay: unknown"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Infer(prov, tt.obs)
			if p.Policy.MaxRetries != nil {
				t.Fatalf("maxRetries = %d, want unknown", *p.Policy.MaxRetries)
			}
			text := PolicyYAML(p, prov)
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("policy lacks %q:\n%s", w, text)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(text, a) {
					t.Errorf("policy holds %q, which was not learnt:\n%s", a, text)
				}
			}
			pol, err := policyfile.Parse([]byte(text), "probed.yaml")
			if err != nil {
				t.Fatalf("ParsePolicy: %v\n%s", err, text)
			}
			if pol.LimitKnown(exType) {
				t.Error("the limit reads as known")
			}
			for _, fr := range p.Faults {
				f, _ := prov.Fault(fr.Fault)
				if fr.Retried == nil || fr.Sample > 0 || f.Group != "status" {
					continue
				}
				e := f.Err
				if got := pol.Retries(retry.Classify(&e)); got != *fr.Retried {
					t.Errorf("policy retries %s = %t, profile says %t", fr.Fault, got, *fr.Retried)
				}
			}
			for attempt := 1; attempt <= 12; attempt++ {
				lo, hi, ok := pol.Envelope(exType, attempt, 0, false)
				switch {
				case !ok:
					t.Errorf("attempt %d: no retry allowed, the limit being unknown", attempt)
				case !tt.waitsKnown && (lo != 0 || hi != retry.UnknownWait):
					t.Errorf("attempt %d: waits [%s, %s] checked, though not learnt", attempt, lo, hi)
				case tt.waitsKnown && attempt == 1 && (lo != 375*time.Millisecond || hi != 500*time.Millisecond):
					t.Errorf("attempt 1: waits [%s, %s], want the learnt [375ms, 500ms]", lo, hi)
				}
			}
		})
	}
}
