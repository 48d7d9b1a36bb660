// Payload decoding: the members of each event type's payload that the
// analysis reads, as the trace.Reader hands them over (ReadMembers).

package analyze

import (
	"github.com/retrylab/retrylab/trace"
	"github.com/retrylab/retrylab/trace/internal/jsonval"
)

// payloadFields are the payload members the analysis reads, of whichever
// event is being read.
type payloadFields struct {
	provider, model, failureType, from, to, reason, promptPattern string
	dur, retries, status, delay, iter                             int64
	success, willRetry, hasIter                                   bool
}

// extraFields are the payload members of the issue 9 figures. They are
// apart from payloadFields, and cleared only after an event that set one
// (acc.dirty9), so that the events of the hot loop pay nothing for them.
type extraFields struct {
	ticket, category, event, why string
	attempt, delay               int64
	msg, modelRaw                []byte // raw JSON tokens, valid until the next event
	valid, passed, shouldRetry   bool
	errCtx                       bool
}

// payloadReaders are an acc's readers of payload members, one per event
// type it reads, bound once (a method value made per event would allocate).
type payloadReaders struct {
	requestFinished, retryAttempt, runEscalated, repairAttempted func(k, v []byte)
	extra                                                        map[string]func(k, v []byte)
}

func (a *acc) bindReaders() {
	a.readers = payloadReaders{
		requestFinished: a.memberRequestFinished,
		retryAttempt:    a.memberRetryAttempt,
		runEscalated:    a.memberRunEscalated,
		repairAttempted: a.memberRepairAttempted,
		extra:           map[string]func(k, v []byte){},
	}
	for typ, read := range map[string]func(k, v []byte){
		trace.TypeCandidateGenerated:   a.memberCandidate,
		trace.TypeVerificationFinished: a.memberVerification,
		trace.TypeRunStopped:           a.memberRunStopped,
		trace.TypeRetryDecision:        a.memberRetryDecision,
		trace.TypeTicketTransition:     a.memberTicketTransition,
		trace.TypeErrorReport:          a.memberErrorReport,
		trace.TypeEscalationDeclined:   a.memberEscalationDeclined,
	} {
		a.readers.extra[typ] = func(k, v []byte) {
			a.dirty9 = true
			read(k, v)
		}
	}
}

// membersOf returns the reader of the payload members of events of type
// typ, nil when the analysis reads none of them (the payload is still
// checked to be valid JSON).
func (a *acc) membersOf(typ string) func(k, v []byte) {
	switch typ {
	case trace.TypeProviderRequestFinished:
		return a.readers.requestFinished
	case trace.TypeRetryAttempt:
		return a.readers.retryAttempt
	case trace.TypeRunEscalated:
		return a.readers.runEscalated
	case trace.TypeRepairAttempted:
		return a.readers.repairAttempted
	}
	return a.readers.extra[typ]
}

func (a *acc) memberRequestFinished(k, v []byte) {
	c := &a.cur
	switch string(k) {
	case "provider":
		c.provider = a.str(v)
	case "model":
		c.model = a.str(v)
	case "durationMs":
		c.dur, _ = jsonval.Int(v)
	case "success":
		c.success = jsonval.Bool(v)
	case "retries":
		c.retries, _ = jsonval.Int(v)
	case "failureType":
		c.failureType = a.str(v)
	case "promptPattern":
		if a.byPattern {
			c.promptPattern = a.str(v)
		}
	}
}

func (a *acc) memberRetryAttempt(k, v []byte) {
	c := &a.cur
	switch string(k) {
	case "failureType":
		c.failureType = a.str(v)
	case "status":
		c.status, _ = jsonval.Int(v)
	case "delayMs":
		c.delay, _ = jsonval.Int(v)
	case "willRetry":
		c.willRetry = jsonval.Bool(v)
	case "model":
		a.cur9.modelRaw, a.dirty9 = v, true
	case "errorMessage":
		a.cur9.msg, a.dirty9 = v, true
	case "errorContext":
		a.cur9.errCtx, a.dirty9 = jsonval.Bool(v), true
	}
}

func (a *acc) memberRunEscalated(k, v []byte) {
	c := &a.cur
	switch string(k) {
	case "from":
		c.from = a.str(v)
	case "to":
		c.to = a.str(v)
	case "reason":
		c.reason = a.str(v)
	}
}

func (a *acc) memberRepairAttempted(k, v []byte) {
	if string(k) == "iteration" {
		if it, ok := jsonval.Int(v); ok {
			a.cur.iter, a.cur.hasIter = it, true
		}
	}
}

// The readers of the payload members of the issue 9 event types.

func (a *acc) memberCandidate(k, v []byte) {
	if string(k) == "valid" {
		a.cur9.valid = jsonval.Bool(v)
	}
}

func (a *acc) memberVerification(k, v []byte) {
	if string(k) == "passed" || string(k) == "success" {
		a.cur9.passed = a.cur9.passed || jsonval.Bool(v)
	}
}

func (a *acc) memberRunStopped(k, v []byte) {
	if string(k) == "reason" {
		a.cur.reason = a.str(v)
	}
}

func (a *acc) memberRetryDecision(k, v []byte) {
	e := &a.cur9
	switch string(k) {
	case "ticketId":
		e.ticket = a.str(v)
	case "category":
		e.category = a.str(v)
	case "currentAttempt":
		e.attempt, _ = jsonval.Int(v)
	case "shouldRetry":
		e.shouldRetry = jsonval.Bool(v)
	case "nextDelayMs":
		e.delay, _ = jsonval.Int(v)
	}
}

func (a *acc) memberTicketTransition(k, v []byte) {
	e := &a.cur9
	switch string(k) {
	case "ticketId":
		e.ticket = a.str(v)
	case "event":
		e.event = a.str(v)
	case "to":
		a.cur.to = a.str(v)
	case "errorCategory":
		e.category = a.str(v)
	}
}

func (a *acc) memberErrorReport(k, v []byte) {
	switch string(k) {
	case "failureType":
		a.cur.failureType = a.str(v)
	case "category":
		a.cur9.category = a.str(v)
	}
}

func (a *acc) memberEscalationDeclined(k, v []byte) {
	switch string(k) {
	case "reason":
		a.cur.reason = a.str(v)
	case "why":
		a.cur9.why = a.str(v)
	}
}
