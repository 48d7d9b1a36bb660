package wire

import (
	"strings"
	"unicode/utf8"
)

// A truncate or a malformed fault cuts a 200 answer short. Streamed, a
// truncate fault sends the first events and ends the response cleanly (the
// chunked terminator) before the events that close the stream
// (Format.Closing), so only a client that checks for them notices; a
// malformed fault sends the first events, then one event whose data is cut
// mid-JSON (Format.Malformed), then ends cleanly. The count of events is
// clamped to the events before the closing ones: the closing events are
// never sent, whatever the count (the scenario cannot know how many events
// a format's answer has). Not streamed, a truncate fault answers the way
// the provider answers an answer cut by its output limit (the text's first
// half, with stop_reason max_tokens, finish_reason length, status
// incomplete, finishReason MAX_TOKENS), and a malformed fault sends the
// first half of the JSON body, with a Content-Length that matches it.

// Cut is where a truncate or a malformed fault cuts a stream: after its
// first AfterEvents events.
type Cut struct{ AfterEvents int }

// truncated reports whether p's answer is cut short by a truncate fault.
func (p Params) truncated() bool { return p.Fault.Truncate != nil }

// cutAt returns how many of a stream's events a cut after n events keeps:
// n, but none of the events that close the stream.
func cutAt(p Params, events []string, n int) int {
	return min(max(n, 0), max(len(events)-p.Format.Closing(p), 0))
}

// cutEvents applies a truncate or a malformed fault to a stream's events.
func cutEvents(p Params, events []string) []string {
	if f := p.Fault.Truncate; f != nil {
		return events[:cutAt(p, events, f.AfterEvents)]
	}
	if f := p.Fault.Malformed; f != nil {
		n := cutAt(p, events, f.AfterEvents)
		return append(events[:n:n], p.Format.Malformed(p, n))
	}
	return events
}

// message is the JSON body of a 200 that does not stream: the format's
// answer, cut short by its output limit for a truncate fault, cut in half
// for a malformed fault.
func message(p Params) string {
	switch {
	case p.Fault.Truncate != nil:
		q := p
		q.Fault.Text = cutText(p.text())
		return p.Format.Message(q)
	case p.Fault.Malformed != nil:
		return halfOf(p.Format.Message(p))
	}
	return p.Format.Message(p)
}

// cutText is the text of an answer cut short by the output limit: the
// first half of its deltas, at least one.
func cutText(text string) string {
	ds := mockDeltas(text)
	return strings.TrimRight(strings.Join(ds[:(len(ds)+1)/2], ""), " ")
}

// halfOf is the first half of s, cut at the start of a UTF-8 sequence. Half
// a JSON object is never valid JSON: its closing brace is missing.
func halfOf(s string) string {
	k := len(s) / 2
	for k > 0 && !utf8.RuneStart(s[k]) {
		k--
	}
	return s[:k]
}

// cutData returns the SSE event ev with the value of its data line cut in
// half, its other lines as they are, ended by the blank line.
func cutData(ev string) string {
	i := strings.Index(ev, "data: ")
	if i < 0 {
		return ev
	}
	start := i + len("data: ")
	end := strings.IndexByte(ev[start:], '\n')
	if end < 0 {
		end = len(ev) - start
	}
	return ev[:start] + halfOf(ev[start:start+end]) + "\n\n"
}

// deltaAt returns the index of the text-delta event (one that holds
// marker) a malformed fault cuts after n events: the n-th, when it is one,
// else the first one (0 when none is).
func deltaAt(p Params, events []string, n int, marker string) int {
	if n < len(events)-p.Format.Closing(p) && strings.Contains(events[n], marker) {
		return n
	}
	for i, e := range events {
		if strings.Contains(e, marker) {
			return i
		}
	}
	return 0
}
