package trace

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"reflect"
	"strings"
)

// A line longer than MaxLineBytes is not buffered: longLine reads it as a
// stream and checks it as parseTop would, writing down a bounded form of
// it, the line that parseTop then reads:
//
//	{"type":…,"runId":…,"ts":…,"payload":…}
//
// with the last of each member (as parseTop keeps the last) and, in them:
//
//   - a string of more than maxKeptString raw bytes (key or value) as its
//     label (see Label): its first bytes, "…" and the hash of the whole,
//     which is all the labels and the message normaliser read of it;
//   - a number of more than maxKeptNumber bytes as a short number of the
//     same value (see numberForm);
//   - once the payload's form holds payloadBudget bytes, no more elements
//     of its arrays and objects, and of its own members only those a reader
//     of retrylab reads (wantedKeys), the last of each, with strings of more
//     than MaxLabelBytes as their labels and arrays and objects left empty.
//
// Other members of the line are checked and dropped. Memory stays bounded
// whatever the line holds.
const (
	maxKeptString = 64 << 10
	maxKeptNumber = 64
	payloadBudget = MaxLineBytes - 2*maxKeptString
)

// longLimits are the bounds of longLine; zero fields are the constants'
// (tests lower them).
type longLimits struct{ keepStr, keepNum, budget int }

func (l longLimits) or() longLimits {
	return longLimits{cmp.Or(l.keepStr, maxKeptString), cmp.Or(l.keepNum, maxKeptNumber), cmp.Or(l.budget, payloadBudget)}
}

// sink is where longLine writes the form of a value; a nil *sink drops it.
type sink struct {
	b      []byte
	limit  int // no more elements once b holds limit bytes
	maxStr int // longer strings are written as their labels
}

func (s *sink) over() bool { return len(s.b) >= s.limit }

// longLine reads one line from a Reader: first pre, then the Reader's
// buffer up to the line's '\n' (none when whole: pre is the whole line).
type longLine struct {
	r       *Reader
	deep    bool   // a value nested deeper than maxDepth was met
	win     []byte // unread bytes of the current window
	winLen  int    // the length of the current window, when taken from r.br
	nlAfter bool   // r.br holds the line's '\n' after the window
	pre     []byte
	whole   bool // the line ends with pre
	fromBr  bool // win is in r.br's buffer
	done    bool // the line has ended
	last    bool // ... at the end of the file, without a '\n'
	err     error

	typ, run, ts, payload, key, late sink
	lates                            []lateMember
	hasType, hasRun, hasTS, hasPay   bool
	sbuf                             []byte
	lab                              labelHash
	maxNum                           int
}

// lateMember is a payload member kept past payloadBudget.
type lateMember struct {
	key string
	val []byte
}

// readLong reads a line longer than MaxLineBytes whose first bytes are
// pre (the whole line when whole, with last as readLine says) and returns
// the bounded form of it, or the reason it is malformed; blank is true for
// a line of white space, isLast for the file's last line without a '\n'.
func (r *Reader) readLong(pre []byte, whole, last bool) (line []byte, reason string, blank, isLast bool, err error) {
	p := r.ll
	if p == nil {
		p = &longLine{}
		r.ll = p
	}
	*p = longLine{r: r, pre: pre, whole: whole, last: last, win: pre,
		typ: p.typ, run: p.run, ts: p.ts, payload: p.payload, key: p.key, late: p.late,
		lates: p.lates[:0], sbuf: p.sbuf[:0], lab: p.lab}
	lim := r.limits.or()
	p.maxNum = lim.keepNum
	for _, s := range []*sink{&p.typ, &p.run, &p.ts, &p.payload, &p.key, &p.late} {
		s.b, s.limit, s.maxStr = s.b[:0], lim.budget, lim.keepStr
	}
	if p.payload.b == nil { // once per Reader: growing it costs four times its size
		p.payload.b = make([]byte, 0, payloadBudget+2*maxKeptString)
	}
	p.late.limit, p.late.maxStr = 0, MaxLabelBytes
	reason, blank = p.top()
	for p.err == nil && p.fill() { // the rest of a malformed line
		p.win = nil
	}
	if p.err != nil {
		return nil, "", false, false, p.err
	}
	r.line++
	if p.last {
		r.eof = true
	}
	if reason != "" || blank {
		if p.last && reason != "" {
			reason = "truncated last line (no newline at end of file): " + reason
		}
		return nil, reason, blank, p.last, nil
	}
	return p.form(), "", false, p.last, nil
}

// form is the line parseTop reads in place of the long one.
func (p *longLine) form() []byte {
	b := append(p.r.long[:0], '{')
	add := func(on bool, key string, s *sink) {
		if !on {
			return
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), key...), `":`...)
		b = append(b, s.b...)
	}
	add(p.hasType, "type", &p.typ)
	add(p.hasRun, "runId", &p.run)
	add(p.hasTS, "ts", &p.ts)
	add(p.hasPay, "payload", &p.payload)
	p.r.long = append(b, '}')
	return p.r.long
}

// fill moves to the next window of the line; false at its end (or on an
// error, in p.err).
func (p *longLine) fill() bool {
	for {
		if p.done {
			return false
		}
		if p.fromBr {
			p.r.br.Discard(p.winLen)
			p.fromBr = false
			if p.nlAfter {
				p.r.br.Discard(1)
				p.done = true
				return false
			}
		}
		if p.pre != nil {
			p.pre = nil
			if p.whole {
				p.done = true
				return false
			}
		}
		if _, err := p.r.br.Peek(1); err != nil {
			p.done = true
			if err == io.EOF {
				p.last = true
			} else {
				p.err = fmt.Errorf("%s: %w", p.r.name, err)
			}
			return false
		}
		b, _ := p.r.br.Peek(p.r.br.Buffered())
		p.nlAfter = false
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b, p.nlAfter = b[:i], true
		}
		if err := p.r.checkCtx(len(b)); err != nil {
			p.done, p.err = true, err
			return false
		}
		p.win, p.winLen, p.fromBr = b, len(b), true
		if len(b) > 0 || p.nlAfter {
			return len(b) > 0 || p.fill()
		}
	}
}

// peek returns the next byte of the line, skipping white space first
// when ws is true; false at the end of the line.
func (p *longLine) peek(ws bool) (byte, bool) {
	for {
		for len(p.win) > 0 {
			if c := p.win[0]; !ws || !isSpace(c) {
				return c, true
			}
			p.win = p.win[1:]
		}
		if !p.fill() {
			return 0, false
		}
	}
}

const invalidJSON = "invalid JSON"

// top reads the line as parseTop does (see there).
func (p *longLine) top() (reason string, blank bool) {
	c, ok := p.peek(true)
	if !ok {
		return "", true
	}
	if c != '{' {
		return "not a JSON object", false
	}
	p.win = p.win[1:]
	c, ok = p.peek(true)
	if ok && c == '}' {
		p.win = p.win[1:]
	} else {
		for {
			if !ok || c != '"' {
				return invalidJSON, false
			}
			if reason := p.topMember(); reason != "" {
				return reason, false
			}
			if c, ok = p.peek(true); !ok || c != ',' && c != '}' {
				return invalidJSON, false
			}
			p.win = p.win[1:]
			if c == '}' {
				break
			}
			c, ok = p.peek(true)
		}
	}
	if _, ok := p.peek(true); ok {
		return "trailing data after the JSON object", false
	}
	return "", false
}

// topMember reads one member of the line's object.
func (p *longLine) topMember() string {
	p.key.b = p.key.b[:0]
	if !p.str(&p.key, true) {
		return invalidJSON
	}
	key := string(p.key.b[1 : len(p.key.b)-1])
	c, ok := p.peek(true)
	if !ok || c != ':' {
		return invalidJSON
	}
	p.win = p.win[1:]
	if c, ok = p.peek(true); !ok {
		return invalidJSON
	}
	var s *sink
	isStr := c == '"'
	switch {
	case key == "type" && isStr:
		s, p.hasType = &p.typ, true
	case key == "runId" && isStr:
		s, p.hasRun = &p.run, true
	case key == "ts" && isStr:
		s, p.hasTS = &p.ts, true
	case key == "payload":
		s, p.hasPay = &p.payload, true
	}
	if s != nil {
		s.b = s.b[:0]
	}
	if key == "payload" {
		p.lates = p.lates[:0]
	}
	ok = p.value(s, 1, key == "payload")
	switch {
	case !ok && p.deep:
		return tooDeep
	case !ok:
		return invalidJSON
	case key == "type" && !isStr:
		return `"type" is not a string`
	}
	return ""
}

// value reads the value at the window's start into s; payload is true for
// the line's payload.
func (p *longLine) value(s *sink, depth int, payload bool) bool {
	c, ok := p.peek(false)
	if !ok {
		return false
	}
	switch {
	case c == '"':
		return p.str(s, false)
	case c == '{':
		return p.object(s, depth, payload)
	case c == '[':
		return p.array(s, depth)
	case c == 't':
		return p.lit(s, "true")
	case c == 'f':
		return p.lit(s, "false")
	case c == 'n':
		return p.lit(s, "null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number(s)
	}
	return false
}

func (p *longLine) lit(s *sink, lit string) bool {
	for i := 0; i < len(lit); i++ {
		if c, ok := p.peek(false); !ok || c != lit[i] {
			return false
		}
		p.win = p.win[1:]
	}
	if s != nil {
		s.b = append(s.b, lit...)
	}
	return true
}

// object reads an object; the payload's own members past the budget go
// to p.lates.
func (p *longLine) object(s *sink, depth int, payload bool) bool {
	if depth > maxDepth {
		p.deep = true
		return false
	}
	p.win = p.win[1:]
	if s != nil {
		s.b = append(s.b, '{')
	}
	n := 0
	c, ok := p.peek(true)
	if ok && c == '}' {
		p.win = p.win[1:]
	} else {
		for {
			if !ok || c != '"' {
				return false
			}
			if !p.member(s, depth, payload && s != nil, &n) {
				return false
			}
			if c, ok = p.peek(true); !ok || c != ',' && c != '}' {
				return false
			}
			p.win = p.win[1:]
			if c == '}' {
				break
			}
			c, ok = p.peek(true)
		}
	}
	if s != nil {
		if payload {
			s.b = p.appendLates(s.b, n > 0)
		}
		s.b = append(s.b, '}')
	}
	return true
}

// member reads one member of an object into s (n counts those written).
func (p *longLine) member(s *sink, depth int, payload bool, n *int) bool {
	keep := s != nil && !s.over()
	var ks *sink
	switch {
	case keep:
		if *n > 0 {
			s.b = append(s.b, ',')
		}
		ks = s
	case payload:
		p.key.b = p.key.b[:0]
		ks = &p.key
	}
	if !p.str(ks, true) {
		return false
	}
	if c, ok := p.peek(true); !ok || c != ':' {
		return false
	}
	p.win = p.win[1:]
	if _, ok := p.peek(true); !ok {
		return false
	}
	vs := (*sink)(nil)
	switch {
	case keep:
		s.b = append(s.b, ':')
		vs = s
		*n++
	case payload && wantedKeys[string(p.key.b[1:len(p.key.b)-1])]:
		p.late.b = p.late.b[:0]
		vs = &p.late
	}
	if !p.value(vs, depth+1, false) {
		return false
	}
	if vs == &p.late {
		p.addLate(string(p.key.b[1:len(p.key.b)-1]), p.late.b)
	}
	return true
}

// addLate keeps the last value of each wanted key past the budget.
func (p *longLine) addLate(key string, val []byte) {
	for i := range p.lates {
		if p.lates[i].key == key {
			p.lates[i].val = append(p.lates[i].val[:0], val...)
			return
		}
	}
	p.lates = append(p.lates, lateMember{key: key, val: append([]byte(nil), val...)})
}

func (p *longLine) appendLates(b []byte, comma bool) []byte {
	for _, m := range p.lates {
		if comma {
			b = append(b, ',')
		}
		comma = true
		b = append(append(append(append(b, '"'), m.key...), `":`...), m.val...)
	}
	return b
}

func (p *longLine) array(s *sink, depth int) bool {
	if depth > maxDepth {
		p.deep = true
		return false
	}
	p.win = p.win[1:]
	if s != nil {
		s.b = append(s.b, '[')
	}
	n := 0
	c, ok := p.peek(true)
	if ok && c == ']' {
		p.win = p.win[1:]
	} else {
		for {
			es := s
			if s != nil && s.over() {
				es = nil
			} else if s != nil && n > 0 {
				s.b = append(s.b, ',')
			}
			if es != nil {
				n++
			}
			if !p.value(es, depth+1, false) {
				return false
			}
			if c, ok = p.peek(true); !ok || c != ',' && c != ']' {
				return false
			}
			p.win = p.win[1:]
			if c == ']' {
				break
			}
			if _, ok = p.peek(true); !ok {
				return false
			}
		}
	}
	if s != nil {
		s.b = append(s.b, ']')
	}
	return true
}

// minKeptKey is the longest key always kept as it is: readers compare
// keys as written, escapes and all.
const minKeptKey = 4096

// str reads a string; a long one is written as its label.
func (p *longLine) str(s *sink, key bool) bool {
	maxStr := 0
	if s != nil {
		maxStr = s.maxStr
		if key {
			maxStr = max(maxStr, minKeptKey)
		}
	}
	p.win = p.win[1:] // the opening quote
	p.sbuf = p.sbuf[:0]
	long, esc := false, false
	for {
		if len(p.win) == 0 && !p.fill() {
			return false
		}
		w := p.win
		var end int
		end, esc = stringEnd(w, esc)
		chunk := w
		if end >= 0 {
			chunk, p.win = w[:end], w[end+1:]
		} else {
			p.win = nil
		}
		if s != nil {
			if !long && len(p.sbuf)+len(chunk) > maxStr {
				long = true
				p.lab.reset()
				p.lab.write(p.sbuf)
			}
			if long {
				p.lab.write(chunk)
			} else {
				p.sbuf = append(p.sbuf, chunk...)
			}
		}
		if end >= 0 {
			break
		}
	}
	if s != nil {
		if long {
			s.b = appendQuoted(s.b, p.lab.label())
		} else {
			s.b = append(append(append(s.b, '"'), p.sbuf...), '"')
		}
	}
	return true
}

// stringEnd is the index of the quote that ends a string in w, or -1;
// esc says w[0] is escaped, and escNext that the next window's first
// byte is.
func stringEnd(w []byte, esc bool) (end int, escNext bool) {
	i := 0
	if esc {
		i = 1
	}
	for i < len(w) {
		j := quoteOrBackslash(w[i:])
		if j < 0 {
			return -1, false
		}
		i += j
		if w[i] == '"' {
			return i, false
		}
		i += 2
	}
	return -1, i > len(w)
}

// quoteOrBackslash is the index of the first '"' or '\\' in b, or -1.
func quoteOrBackslash(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if m := hasZero(x^quotes) | hasZero(x^backslashes); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if b[i] == '"' || b[i] == '\\' {
			return i
		}
	}
	return -1
}

// number reads a number as scanNumber does; a long one is written as a
// short one of the same value (800 significant digits and a sticky last
// one decide a float64's rounding as the whole number does).
func (p *longLine) number(s *sink) bool {
	var n numberForm
	p.sbuf = p.sbuf[:0]
	c, _ := p.peek(false)
	if c == '-' {
		n.neg = true
		p.take(c)
	}
	if p.digits(&n, false) == 0 {
		return false
	}
	if c, ok := p.peek(false); ok && c == '.' {
		n.float = true
		p.take(c)
		if p.digits(&n, true) == 0 {
			return false
		}
	}
	if c, ok := p.peek(false); ok && (c == 'e' || c == 'E') {
		n.float = true
		p.take(c)
		if c, ok := p.peek(false); ok && (c == '+' || c == '-') {
			n.expNeg = c == '-'
			p.take(c)
		}
		if p.expDigits(&n) == 0 {
			return false
		}
	}
	if s != nil {
		if len(p.sbuf) <= p.maxNum {
			s.b = append(s.b, p.sbuf...)
		} else {
			s.b = n.append(s.b)
		}
	}
	return true
}

// take consumes c, the byte at the window's start, keeping the first
// bytes of a number in p.sbuf.
func (p *longLine) take(c byte) {
	p.win = p.win[1:]
	if len(p.sbuf) <= p.maxNum {
		p.sbuf = append(p.sbuf, c)
	}
}

func (p *longLine) digits(n *numberForm, frac bool) int {
	d := 0
	for {
		c, ok := p.peek(false)
		if !ok || c < '0' || c > '9' {
			return d
		}
		p.take(c)
		n.digit(c, frac)
		d++
	}
}

func (p *longLine) expDigits(n *numberForm) int {
	d := 0
	for {
		c, ok := p.peek(false)
		if !ok || c < '0' || c > '9' {
			return d
		}
		p.take(c)
		if n.exp < 1e12 {
			n.exp = n.exp*10 + int64(c-'0')
		}
		d++
	}
}

// wantedKeys are the payload members some reader of retrylab reads: the
// fields of the payload types, and those of the orchestrator's events that
// the analysis reads. A long line keeps them past its payload's budget.
var wantedKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range []string{"iteration", "valid", "passed", "success", "reason", "category",
		"errorCategory", "event", "why", "ticketId", "currentAttempt", "shouldRetry", "nextDelayMs"} {
		m[k] = true
	}
	for _, v := range []any{ProviderRequestFinished{}, RetryAttempt{}, RunEscalated{}, RetryDecision{},
		ErrorReport{}, TicketTransition{}, EscalationDeclined{}, RunStarted{}, RunFinished{},
		MockRequest{}, MockResponse{}} {
		t := reflect.TypeOf(v)
		for i := range t.NumField() {
			if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
				m[name] = true
			}
		}
	}
	return m
}()
