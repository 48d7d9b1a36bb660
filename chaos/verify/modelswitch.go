package verify

import (
	"github.com/retrylab/retrylab/chaos/mock"
	"github.com/retrylab/retrylab/trace"
)

// addModelSwitches finds where a client switched model within a logical
// request, from the models the journal saw: attempt k asked for A and
// attempt k+1, of the same request, for B. Claude Code with
// --fallback-model does this after three 529s in a row, and writes no
// trace. For a client without a trace these switches are its escalations
// (reason unknown); a client whose trace speaks is judged by its own
// RunEscalated events. Attempts that name no model (a reset before the
// request, a body that is not JSON) neither start nor end a switch.
func (ob *Observed) addModelSwitches(attempts []mock.ServerAttempt) {
	prev := ""
	for k, a := range attempts {
		if k > 0 && k-1 < len(ob.RequestEnds) && ob.RequestEnds[k-1] {
			prev = "" // a new logical request may name any model
		}
		if a.Model == "" {
			continue
		}
		if prev != "" && a.Model != prev {
			ob.ModelSwitches = append(ob.ModelSwitches, k+1)
			if !ob.ClientTrace && !ob.hasTraceEscalations() {
				ob.Escalations = append(ob.Escalations, trace.RunEscalated{From: prev, To: a.Model})
				ob.EscalationsFromServer = true
			}
		}
		prev = a.Model
	}
}

func (ob *Observed) hasTraceEscalations() bool {
	return len(ob.Escalations) > 0 && !ob.EscalationsFromServer
}

// switchedAt reports whether server attempt k (1-based) asked for another
// model than the one before it in its request, for a client without a
// trace: the gap before it is a switch, not a wait, and it is the first
// attempt on its new target.
func (ob Observed) switchedAt(k int) bool {
	if !ob.EscalationsFromServer {
		return false
	}
	for _, s := range ob.ModelSwitches {
		if s == k {
			return true
		}
	}
	return false
}
