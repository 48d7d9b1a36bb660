package retry

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// SeedLadder is seed 004's MODEL_LADDER, the default ladder of the
// escalation-epic preset, with the seed's model names as written.
var SeedLadder = []string{"claude-haiku-3-5-20241022", "claude-sonnet-4-20250514", "claude-opus-4-20250514"}

// EscalationOffer is a switch of model or provider about to happen, offered
// to Retrier.Confirm before it does (seed 004 US-003: "cost estimate shown
// before escalation").
type EscalationOffer struct {
	From, To     string // models; provider/model when the provider changes
	Reason       string // as RunEscalated.Reason: auto_after_retries, context_limit, ...
	AfterRetries int    // retries that failed on From before the switch
	// CostEstimate is seed 004's estimate: (output price of To − of From) ×
	// expected output tokens / 1000, in US dollars; Priced is false when
	// either model has no price (CostEstimate is then 0).
	CostEstimate float64
	Priced       bool
	// Spent is what the Retrier's earlier switches are estimated to cost;
	// Cap is Policy.Escalation.MaxCost (0: no cap).
	Spent, Cap float64
}

// costLedger adds up the cost estimates of a Retrier's switches: the run's
// escalation spending, which Policy.Escalation.MaxCost caps.
type costLedger struct {
	mu    sync.Mutex
	spent float64
}

func (c *costLedger) total() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spent
}

// reserve adds cost unless that takes the total above limit (> 0).
func (c *costLedger) reserve(cost, limit float64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if limit > 0 && c.spent+cost > limit+1e-12 {
		return false
	}
	c.spent += cost
	return true
}

// refund takes back a booked cost (negative estimates were booked as 0).
func (c *costLedger) refund(cost float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spent = math.Max(c.spent-math.Max(cost, 0), 0)
}

// EscalationSpent is what the switches of model or provider made by r so
// far are estimated to add, in US dollars (negative estimates count as 0).
func (r *Retrier) EscalationSpent() float64 { return r.spend.total() }

// guard computes the switch's cost estimate before it happens, checks it
// against the run's cap and offers it to Confirm. why is "" when the switch
// may go ahead (its cost is then booked); else a trace.Declined* value.
func (l *loop) guard(ctx context.Context, d *decision) (why, detail string) {
	sw := d.sw
	cost, priced := l.r.prices().Estimate(l.cur.model, sw.to.model, l.r.OutputTokens)
	if priced {
		d.cost = &cost
	}
	limit := l.p.Escalation.MaxCost
	book := math.Max(cost, 0)
	spent := l.r.spend.total()
	if limit > 0 && !priced {
		return trace.DeclinedUnpriced, fmt.Sprintf("no price for %s or %s, and escalation.maxCost is %v", l.cur.model, sw.to.model, limit)
	}
	if limit > 0 && spent+book > limit+1e-12 {
		return trace.DeclinedCostCap, fmt.Sprintf("$%.4f spent + $%.4f would pass escalation.maxCost $%v", spent, book, limit)
	}
	if l.r.Confirm != nil {
		offer := EscalationOffer{From: l.cur.model, To: sw.to.model, Reason: sw.reason, CostEstimate: cost, Priced: priced,
			Spent: spent, Cap: limit, AfterRetries: l.onTarget - 1}
		if sw.to.provider != l.cur.provider {
			offer.From, offer.To = l.cur.provider+"/"+l.cur.model, sw.to.provider+"/"+sw.to.model
		}
		if err := l.r.Confirm(ctx, offer); err != nil {
			return trace.DeclinedRefused, provider.Redact(err.Error())
		}
	}
	if !l.r.spend.reserve(book, limit) {
		return trace.DeclinedCostCap, fmt.Sprintf("escalation.maxCost $%v reached", limit)
	}
	return "", ""
}

// decline writes an EscalationDeclined (to is empty at the top of the
// ladder) and its log line.
func (l *loop) decline(to target, reason, why, detail string, cost *float64) {
	ev := trace.EscalationDeclined{From: l.cur.model, To: to.model, Reason: reason, Why: why, Detail: detail, CostEstimate: cost}
	if to.provider != "" && to.provider != l.cur.provider {
		ev.From, ev.To = l.cur.provider+"/"+l.cur.model, to.provider+"/"+to.model
	}
	spent := l.r.spend.total()
	ev.Spent = &spent
	if c := l.p.Escalation.MaxCost; c > 0 {
		ev.Cap = &c
	}
	l.r.Trace.Emit(trace.TypeEscalationDeclined, ev)
	if why == trace.DeclinedTopOfLadder {
		fmt.Fprintf(l.log, "[retry] Not escalating from %s: %s\n", ev.From, ReasonTopOfLadder)
		return
	}
	fmt.Fprintf(l.log, "[retry] Not switching from %s to %s (%s): %s\n", ev.From, ev.To, why, detail)
}

// atTop reports a failure that would have escalated up the ladder, had the
// current model not been its last.
func (l *loop) atTop(d *decision) bool {
	ladder := l.r.ladder()
	if !l.p.Enabled || d.c.Type == Canceled || len(ladder) < 2 || l.cur.model != ladder[len(ladder)-1] {
		return false
	}
	return (d.c.Type == ContextTooLong && l.p.Escalation.OnContextLimit) || (d.retryable && d.reason == ReasonAttemptsExhausted)
}

// switchName names the target of a switch as RunEscalated does: the model,
// or provider/model when the provider changes.
func switchName(from, to target) string {
	if to.provider == "" || to.provider == from.provider {
		if to.model == "" {
			return from.model
		}
		return to.model
	}
	return to.provider + "/" + to.model
}
