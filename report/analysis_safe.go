package report

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace"
)

// awsKeyRE matches AWS access key ids, which provider.Redact does not know.
var awsKeyRE = regexp.MustCompile(`\b(AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b`)

// RedactLabel removes anything that looks like a key from a string that
// came from a trace: what provider.Redact removes (sk-... keys, x-api-key
// and Authorization values, Bearer tokens) and AWS access key ids. The
// reader has already decoded JSON escapes, so a key the trace held as
// "\u0041KIA..." is caught too.
func RedactLabel(s string) string {
	if !mayHoldKey(s) {
		return s // most labels: skip the regular expressions (1M distinct models took 10 s)
	}
	s = provider.Redact(s)
	return awsKeyRE.ReplaceAllString(s, "${1}***")
}

// keyMarkers are substrings, lower case, of every match of provider.Redact
// and awsKeyRE: a string without any of them holds no key they would find.
var keyMarkers = []string{"sk-", "key", "bearer", "authorization", "akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa"}

func mayHoldKey(s string) bool {
	ls := strings.ToLower(s)
	for _, m := range keyMarkers {
		if strings.Contains(ls, m) {
			return true
		}
	}
	return false
}

// validUTF8 replaces each byte of invalid UTF-8 with U+FFFD, as
// encoding/json does.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Visible makes a label safe to print to a terminal or a document: control
// characters (C0, DEL, C1), invisible format characters (bidirectional
// overrides, zero-width characters) and U+2028/U+2029 are written as \xNN or \uNNNN, and each
// byte of invalid UTF-8 as \xNN, so nothing in a trace can move the cursor,
// recolour the terminal, reorder text or break a line.
func Visible(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) || invisible(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x100 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case invisible(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// invisible reports whether r is a format character (bidirectional
// overrides, zero-width characters) or a line or paragraph separator.
func invisible(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// safeAnalysis returns a copy of a in which every string that came from a
// trace (unknown type names, failure types, escalation paths and reasons,
// group labels) has gone through RedactLabel, then through Visible when
// visible is set (for people's formats) or validUTF8 otherwise (JSON keeps
// control characters, escaped). Entries that the cleaning makes equal (two
// keys both redacted to sk-***) are merged, so no format repeats a key or
// a series.
func safeAnalysis(a *trace.Analysis, visible bool) *trace.Analysis {
	clean := func(s string) string {
		s = RedactLabel(s)
		if visible {
			return Visible(s)
		}
		return validUTF8(s)
	}
	out := *a
	if a.Inputs.UnknownTypes != nil {
		out.Inputs.UnknownTypes = make(map[string]int, len(a.Inputs.UnknownTypes))
		for k, v := range a.Inputs.UnknownTypes {
			out.Inputs.UnknownTypes[clean(k)] += v
		}
	}
	out.Attempts.ByFailureType = cleanCounts(a.Attempts.ByFailureType, clean)
	out.Attempts.ByStatus = cleanCounts(a.Attempts.ByStatus, clean)
	out.Escalations.ByReason = cleanCounts(a.Escalations.ByReason, clean)
	if a.Escalations.ByPath != nil {
		paths := make([]trace.EscalationPath, 0, len(a.Escalations.ByPath))
		at := map[[2]string]int{}
		for _, p := range a.Escalations.ByPath {
			k := [2]string{clean(p.From), clean(p.To)}
			if i, ok := at[k]; ok {
				paths[i].Count += p.Count
				continue
			}
			at[k] = len(paths)
			paths = append(paths, trace.EscalationPath{From: k[0], To: k[1], Count: p.Count})
		}
		slices.SortStableFunc(paths, func(x, y trace.EscalationPath) int {
			if x.Count != y.Count {
				if x.Count > y.Count {
					return -1
				}
				return 1
			}
			if c := strings.Compare(x.From, y.From); c != 0 {
				return c
			}
			return strings.Compare(x.To, y.To)
		})
		out.Escalations.ByPath = paths
	}
	if a.Groups != nil {
		groups := make([]trace.Group, 0, len(a.Groups))
		recovered := make([]float64, 0, len(a.Groups))
		at := map[string]int{}
		for _, g := range a.Groups {
			keys := make(map[string]string, len(g.Keys))
			var id strings.Builder
			for _, d := range a.By {
				keys[d] = clean(g.Keys[d])
				id.WriteString(keys[d])
				id.WriteByte(0)
			}
			rec := math.Round(g.RecoveredRate * float64(g.WithRetries))
			if i, ok := at[id.String()]; ok {
				m := &groups[i]
				m.Total += g.Total
				m.Succeeded += g.Succeeded
				m.Failed += g.Failed
				m.WithRetries += g.WithRetries
				m.Retries += g.Retries
				recovered[i] += rec
				m.RetryRate = ratio(m.WithRetries, m.Total)
				m.FailureRate = ratio(m.Failed, m.Total)
				m.RecoveredRate = ratioF(recovered[i], m.WithRetries)
				continue
			}
			at[id.String()] = len(groups)
			g.Keys = keys // g is a copy; its unexported --by order is kept
			groups = append(groups, g)
			recovered = append(recovered, rec)
		}
		slices.SortStableFunc(groups, func(x, y trace.Group) int {
			for _, d := range a.By {
				if c := strings.Compare(x.Keys[d], y.Keys[d]); c != 0 {
					return c
				}
			}
			return 0
		})
		out.Groups = groups
	}
	return &out
}

func ratio(n, d int64) float64 { return ratioF(float64(n), d) }

func ratioF(n float64, d int64) float64 {
	if d == 0 {
		return 0
	}
	return n / float64(d)
}

// cleanCounts returns m with its keys cleaned, counts of equal keys summed.
func cleanCounts(m map[string]int64, clean func(string) string) map[string]int64 {
	if m == nil {
		return nil
	}
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[clean(k)] += v
	}
	return out
}
