package report

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/retrylab/retrylab/retry/provider"
	"github.com/retrylab/retrylab/trace/analyze"
)

// labelKeyREs are keys that provider.Redact does not know, each with the
// lower-case markers (at least one of which every match holds) that let a
// label without any skip the expression. Over-redaction is the safe side:
// a label is never a key on purpose.
var labelKeyREs = []struct {
	re     *regexp.Regexp
	repl   string
	marker []string
}{
	// AWS access key ids: a prefix and 16 more (12 or more is redacted).
	{regexp.MustCompile(`(AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[0-9A-Z]{12,}`), "${1}***",
		[]string{"akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "abia", "acca"}},
	// Anthropic and OpenAI keys glued to a word ("xsk-ant-..."), which
	// provider.Redact leaves for fear of "task-...".
	{regexp.MustCompile(`sk-(ant|proj|svcacct|admin)-[A-Za-z0-9_\-]{4,}`), "sk-${1}-***", []string{"sk-"}},
	// Google API keys, GitHub, Slack, Stripe and Hugging Face tokens.
	{regexp.MustCompile(`AIza[0-9A-Za-z_\-]{20,}`), "AIza***", []string{"aiza"}},
	{regexp.MustCompile(`\b(gh[pousr]_|github_pat_)[A-Za-z0-9_]{16,}`), "${1}***", []string{"gh", "github_pat_"}},
	{regexp.MustCompile(`\b(xox[abposre]-)[A-Za-z0-9\-]{8,}`), "${1}***", []string{"xox"}},
	{regexp.MustCompile(`\b([rsp]k_(?:live|test)_)[A-Za-z0-9]{8,}`), "${1}***", []string{"k_live_", "k_test_"}},
	{regexp.MustCompile(`\b(hf_)[A-Za-z0-9]{20,}`), "${1}***", []string{"hf_"}},
	// A JWT (a bearer token without its "Bearer").
	{regexp.MustCompile(`eyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*`), "eyJ***", []string{"eyj"}},
	// A value given to a name that says it is secret: token=V, "secret": "V",
	// password: V, key=V (?key=V is how Google takes its key), ...
	{regexp.MustCompile(`(?i)(\b(?:[a-z0-9]+[_-])*(?:token|secret|password|passwd|pwd|key|apikey|credentials?|auth)["']?\s*[:=]\s*["']?)([^\s"'\\,;&]+)`), "${1}***",
		[]string{"token", "secret", "pass", "pwd", "key", "credential", "auth"}},
}

// RedactLabel removes anything that looks like a key from a string that
// came from a trace: what provider.Redact removes (sk-... keys, x-api-key
// and Authorization values, Bearer tokens), AWS access key ids, Google,
// GitHub, Slack, Stripe and Hugging Face tokens, JWTs, the values given to
// names such as token=, secret: or password=, and the exact values of the
// environment's secrets (see envSecrets), also written escaped. The reader
// has already decoded JSON escapes, so a key the trace held as
// "\u0041KIA..." is caught too.
func RedactLabel(s string) string {
	if m := envSecrets(); m != nil {
		s = m.Redact(s)
	}
	lower := strings.ToLower(s)
	if !mayHoldKey(lower) {
		return s // most labels: skip the regular expressions (1M distinct models took 10 s)
	}
	s = provider.Redact(s)
	for _, p := range labelKeyREs {
		for _, m := range p.marker {
			if strings.Contains(lower, m) {
				s = p.re.ReplaceAllString(s, p.repl)
				lower = strings.ToLower(s)
				break
			}
		}
	}
	return s
}

// keyMarkers are substrings, lower case, of every match of provider.Redact
// and labelKeyREs: a string without any of them holds no key they would find.
var keyMarkers = func() []string {
	m := []string{"sk-", "key", "bearer", "authorization"}
	for _, p := range labelKeyREs {
		m = append(m, p.marker...)
	}
	return m
}()

func mayHoldKey(lower string) bool {
	for _, m := range keyMarkers {
		if strings.Contains(lower, m) {
			return true
		}
	}
	return false
}

// envSecrets is a matcher of the values of the environment variables named
// like secrets (ANTHROPIC_API_KEY, AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN,
// ...) that look like one, or nil if there are none: a key the user has is
// never printed, whatever it looks like and however the trace escaped it.
var envSecrets = sync.OnceValue(func() *provider.Matcher { return secretsMatcher(os.Environ()) })

// secretsMatcher is envSecrets of the environment env ("NAME=value" each).
func secretsMatcher(env []string) *provider.Matcher {
	var keys []string
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		if secretEnvName.MatchString(name) && looksSecret(val) {
			keys = append(keys, val)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return provider.NewMatcher(keys)
}

var secretEnvName = regexp.MustCompile(`(?i)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)`)

// looksSecret reports whether an environment value could be a key: long,
// without spaces, not a path, and mixing letters and digits (so a value
// such as "anthropic" or "true" is not scrubbed from every label).
func looksSecret(v string) bool {
	if len(v) < 16 || len(v) > provider.MaxSecretLen || strings.ContainsAny(v, " \t\n") || strings.HasPrefix(v, "/") || strings.HasPrefix(v, ".") {
		return false
	}
	var letter, digit bool
	for _, r := range v {
		letter = letter || unicode.IsLetter(r)
		digit = digit || unicode.IsDigit(r)
	}
	return letter && digit
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
func safeAnalysis(a *analyze.Analysis, visible bool) *analyze.Analysis {
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
		out.Escalations.ByPath = cleanPaths(a.Escalations.ByPath, clean)
	}
	if a.Groups != nil && !groupsClean(a, clean) {
		out.Groups = cleanGroups(a, clean)
	}
	safeExtra(&out, a, clean)
	return &out
}

// cleanPaths cleans the escalation paths' names, merging the paths that
// become the same, sorted again (most taken first, then by name).
func cleanPaths(in []analyze.EscalationPath, clean func(string) string) []analyze.EscalationPath {
	paths := make([]analyze.EscalationPath, 0, len(in))
	at := map[[2]string]int{}
	for _, p := range in {
		k := [2]string{clean(p.From), clean(p.To)}
		if i, ok := at[k]; ok {
			paths[i].Count += p.Count
			continue
		}
		at[k] = len(paths)
		paths = append(paths, analyze.EscalationPath{From: k[0], To: k[1], Count: p.Count})
	}
	slices.SortStableFunc(paths, func(x, y analyze.EscalationPath) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), strings.Compare(x.From, y.From), strings.Compare(x.To, y.To))
	})
	return paths
}

// cleanGroups cleans the groups' keys, merging the groups whose keys
// become the same (their rates recomputed from the summed counts), sorted
// again by their keys in the order of --by.
func cleanGroups(a *analyze.Analysis, clean func(string) string) []analyze.Group {
	groups := make([]analyze.Group, 0, len(a.Groups))
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
	slices.SortStableFunc(groups, func(x, y analyze.Group) int {
		for _, d := range a.By {
			if c := strings.Compare(x.Keys[d], y.Keys[d]); c != 0 {
				return c
			}
		}
		return 0
	})
	return groups
}

// safeExtra cleans the labels of the issue 9 figures: run and ticket ids,
// categories, reasons, models and error messages. Lists of ids stay sorted;
// messages that clean to the same text are merged.
func safeExtra(out, a *analyze.Analysis, clean func(string) string) {
	o := &out.Orchestrator
	o.RunStoppedByReason = cleanCounts(a.Orchestrator.RunStoppedByReason, clean)
	o.EscalatedRuns = cleanIDs(a.Orchestrator.EscalatedRuns, clean)
	o.RepairIterations.Above = cleanIDs(a.Orchestrator.RepairIterations.Above, clean)
	t := &out.Tickets
	t.RetriedByCategory = cleanCounts(a.Tickets.RetriedByCategory, clean)
	t.Exhausted = cleanIDs(a.Tickets.Exhausted, clean)
	t.TransitionsByEvent = cleanCounts(a.Tickets.TransitionsByEvent, clean)
	t.TransitionsByTo = cleanCounts(a.Tickets.TransitionsByTo, clean)
	c := &out.RetryCore
	c.ErrorReportsByFailureType = cleanCounts(a.RetryCore.ErrorReportsByFailureType, clean)
	c.ErrorReportsByCategory = cleanCounts(a.RetryCore.ErrorReportsByCategory, clean)
	c.EscalationsDeclinedByReason = cleanCounts(a.RetryCore.EscalationsDeclinedByReason, clean)
	c.EscalationsDeclinedByWhy = cleanCounts(a.RetryCore.EscalationsDeclinedByWhy, clean)
	em := &out.ErrorMessages
	em.Top = cleanMessages(a.ErrorMessages.Top, clean)
	if a.ErrorMessages.ByModel != nil {
		em.ByModel = make([]analyze.ModelMessages, 0, len(a.ErrorMessages.ByModel))
		at := map[string]int{}
		for _, m := range a.ErrorMessages.ByModel {
			model := clean(m.Model)
			if i, ok := at[model]; ok {
				mm := &em.ByModel[i]
				mm.Total += m.Total
				mm.Other += m.Other
				mm.Top = cleanMessages(append(slices.Clone(mm.Top), m.Top...), clean)
				continue
			}
			at[model] = len(em.ByModel)
			em.ByModel = append(em.ByModel, analyze.ModelMessages{Model: model, Total: m.Total, Top: cleanMessages(m.Top, clean), Other: m.Other})
		}
	}
}

// cleanIDs cleans each id, dropping duplicates made by cleaning.
func cleanIDs(l analyze.IDList, clean func(string) string) analyze.IDList {
	out := l
	out.IDs = make([]string, 0, len(l.IDs))
	for _, id := range l.IDs {
		out.IDs = append(out.IDs, clean(id))
	}
	slices.Sort(out.IDs)
	out.IDs = slices.Compact(out.IDs)
	return out
}

// cleanMessages cleans each message, summing those made equal, largest first.
func cleanMessages(ms []analyze.MessageCount, clean func(string) string) []analyze.MessageCount {
	if ms == nil {
		return nil
	}
	out := make([]analyze.MessageCount, 0, len(ms))
	at := map[string]int{}
	for _, m := range ms {
		k := clean(m.Message)
		if i, ok := at[k]; ok {
			out[i].Count += m.Count
			continue
		}
		at[k] = len(out)
		out = append(out, analyze.MessageCount{Message: k, Count: m.Count})
	}
	slices.SortStableFunc(out, func(x, y analyze.MessageCount) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), strings.Compare(x.Message, y.Message))
	})
	return out
}

// groupsClean reports whether cleaning leaves every group label as it is,
// so that the groups can be printed as they are: with 100,000 groups,
// copying them and their Keys maps took some 50 MB.
func groupsClean(a *analyze.Analysis, clean func(string) string) bool {
	for _, g := range a.Groups {
		for _, d := range a.By {
			if v := g.Keys[d]; clean(v) != v {
				return false
			}
		}
	}
	return true
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
