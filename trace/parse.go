// Event decoding: a line's top-level members (type, runId, ts, payload)
// picked out in one scan without allocating, known types interned.

package trace

import (
	"encoding/json"
	"time"

	"github.com/retrylab/retrylab/trace/internal/jsonval"
)

// RawEvent is one well-formed line as a Reader saw it. Its byte slices point
// into the Reader's buffer: they are valid only until the next call to Next.
type RawEvent struct {
	Line    int    // 1-based line number in the file
	Type    string // the "type" field
	RunID   []byte // the "runId" string's raw contents, nil if absent
	TS      []byte // the "ts" string's raw contents, nil if absent
	Payload []byte // the raw JSON of "payload", nil if absent

	membersSeen bool
}

// Event copies r into an Event, parsing ts when it is RFC 3339.
func (r *RawEvent) Event() Event {
	ev := Event{V: Version, Type: r.Type, RunID: string(r.RunID)}
	if len(r.Payload) > 0 {
		ev.Payload = append(json.RawMessage(nil), r.Payload...)
	}
	if len(r.TS) > 0 {
		if t, err := time.Parse(time.RFC3339Nano, string(r.TS)); err == nil {
			ev.TS = t
		}
	}
	return ev
}

// parseTop checks that line is one JSON object with a string "type" and
// picks out type, runId, ts and payload without allocating (known types are
// interned). It returns a reason when the line is malformed. When members is
// not nil and the type comes before an object payload, members sees each
// payload member as the payload is scanned.
func parseTop(line []byte, ev *RawEvent, members func(typ string) func(key, val []byte)) string {
	*ev = RawEvent{}
	b := line
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return "not a JSON object"
	}
	const invalid = "invalid JSON"
	haveType := false
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return invalid
			}
			kend, ok := scanString(b, i)
			if !ok {
				return invalid
			}
			key := b[i+1 : kend-1]
			i = skipWS(b, kend)
			if i >= len(b) || b[i] != ':' {
				return invalid
			}
			i = skipWS(b, i+1)
			var vend int
			if string(key) == "payload" && haveType && members != nil && i < len(b) && b[i] == '{' {
				// The reader of this type's members (nil: none wanted) is
				// chosen once per event, not once per member.
				vend, ok = scanObject(b, i, 1, members(ev.Type))
				ev.membersSeen = ok
			} else {
				vend, ok = scanValue(b, i, 1)
			}
			if !ok {
				return badValue(vend)
			}
			val := b[i:vend]
			switch string(key) {
			case "type":
				if val[0] != '"' {
					return `"type" is not a string`
				}
				ev.Type = internType(val)
				haveType = true
			case "runId":
				if val[0] == '"' {
					ev.RunID = val[1 : len(val)-1]
				}
			case "ts":
				if val[0] == '"' {
					ev.TS = val[1 : len(val)-1]
				}
			case "payload":
				ev.Payload = val
			}
			i = skipWS(b, vend)
			if i >= len(b) {
				return invalid
			}
			if b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			if b[i] != '}' {
				return invalid
			}
			i++
			break
		}
	}
	return topEnd(b, i, ev, haveType)
}

// topEnd checks what parseTop found once the object is closed at b[i-1]:
// nothing after it, and a type.
func topEnd(b []byte, i int, ev *RawEvent, haveType bool) string {
	if skipWS(b, i) != len(b) {
		return "trailing data after the JSON object"
	}
	if !haveType {
		return `missing "type"`
	}
	if ev.Type == "" {
		return `empty "type"`
	}
	return ""
}

var internedTypes = func() map[string]string {
	m := make(map[string]string, len(KnownTypes))
	for _, t := range KnownTypes {
		m[t] = t
	}
	return m
}()

// typeSlots is a perfect-enough hash of the known types: a type is found
// by its length and first and last bytes, then one comparison, without
// hashing the whole name (the map stays for the ones that collide).
var typeSlots = func() (t [128]string) {
	for _, k := range KnownTypes {
		if h := typeSlot([]byte(k)); t[h] == "" {
			t[h] = k
		}
	}
	return t
}()

func typeSlot(raw []byte) int {
	if len(raw) == 0 {
		return 0
	}
	return (len(raw)*31 + int(raw[0])*7 + int(raw[len(raw)-1])) & 127
}

func internType(val []byte) string {
	raw := val[1 : len(val)-1]
	if s := typeSlots[typeSlot(raw)]; s == string(raw) && s != "" {
		return s
	}
	if s, ok := internedTypes[string(raw)]; ok {
		return s
	}
	return jsonval.String(val)
}

// JSONInt returns the value of a JSON number, or of a numeric string,
// rounded to an int64 and clamped to its range: how trace analyze reads an
// integer member, for readers of trace events that must agree with it.
func JSONInt(val []byte) (int64, bool) { return jsonval.Int(val) }
