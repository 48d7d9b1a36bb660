package fault

import (
	"fmt"
	"net/http"
	"regexp"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/internal/yamldiag"
	"github.com/retrylab/retrylab/retry/provider"
)

// Status is an HTTP error response: the status, the provider's error body,
// Retry-After and any headers the scenario gives.
type Status struct {
	Status     int     `yaml:"status"`
	RetryAfter *string `yaml:"retryAfter"` // header value, sent as written
	// RetryAfterDate sends Retry-After as an HTTP date this long after the
	// attempt arrived, stamped when it is served (rounded up to the whole
	// second the format has): a date written in the file goes stale while
	// the scenario waits for its turn or its client starts.
	RetryAfterDate Duration          `yaml:"retryAfterDate"`
	ErrorType      string            `yaml:"errorType"` // body error.type (default: the one the status has)
	Message        string            `yaml:"message"`   // body error.message
	Headers        map[string]string `yaml:"headers"`   // extra response headers
}

func init() {
	Register(Def{Kind: Status{}, Order: 10, Keys: []string{"retryAfter", "retryAfterDate", "errorType", "message", "headers"}, Decode: decodeStatus})
}

func decodeStatus(m *Mapping) Kind {
	var s Status
	m.Decode("status", &s.Status)
	m.Decode("retryAfter", &s.RetryAfter)
	m.Decode("retryAfterDate", &s.RetryAfterDate)
	m.Decode("errorType", &s.ErrorType)
	m.Decode("message", &s.Message)
	m.Decode("headers", &s.Headers)
	if len(m.Named()) == 0 {
		for _, k := range []string{"retryAfter", "retryAfterDate", "errorType", "message", "headers"} {
			if m.Has(k) {
				m.Errorf(m.Value(k), m.Path(k), "add status: 429 (or the status you want) to this attempt", "%s needs status", k)
			}
		}
	}
	if s.Status != 0 && (s.Status < 100 || s.Status > 599) {
		m.Errorf(m.Value("status"), m.Path("status"), "use a status between 100 and 599, e.g. 429 or 529", "status %d is not an HTTP status", s.Status)
	}
	if m.Has("retryAfterDate") && s.RetryAfter != nil {
		m.Errorf(m.Value("retryAfterDate"), m.Path("retryAfterDate"), "keep one: retryAfter is sent as written, retryAfterDate as a date stamped when the attempt is served",
			"retryAfter and retryAfterDate both set")
	}
	validateHeaders(m, s.Headers)
	if s.Status == 0 {
		return nil // status: 0 is no status: ok
	}
	return s
}

// tokenRE is an RFC 9110 token: what a header name may hold.
var tokenRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// validateHeaders checks a status fault's headers: names are RFC 9110
// tokens, values hold no control character but a tab (CR or LF would split
// the response).
func validateHeaders(m *Mapping, h map[string]string) {
	hn := m.Value("headers")
	if hn == nil || hn.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(hn.Content); i += 2 {
		k, v := hn.Content[i], hn.Content[i+1]
		fp := yamldiag.Join(m.Path("headers"), k.Value)
		if !tokenRE.MatchString(k.Value) {
			m.Errorf(k, fp, "a header name is letters, digits and !#$%&'*+-.^_`|~, with no spaces: e.g. x-should-retry", "header name %q is not an HTTP token", k.Value)
			continue
		}
		if _, ok := h[k.Value]; !ok {
			continue
		}
		for _, r := range h[k.Value] {
			if (r < 0x20 && r != '\t') || r == 0x7f {
				m.Errorf(v, fp, "remove CR, LF, NUL and other control characters: a header value is one line", "header value holds the control character %U", r)
				break
			}
		}
	}
}

func (Status) Name() string { return "status" }

func (s Status) Describe() string {
	d := fmt.Sprint(s.Status)
	if s.RetryAfter != nil {
		d += " retry-after=" + *s.RetryAfter
	}
	if s.RetryAfterDate > 0 && s.RetryAfter == nil {
		d += " retry-after=date+" + s.RetryAfterDate.D().String()
	}
	if s.ErrorType != "" {
		d += " " + s.ErrorType
	}
	return d
}

// Serve sends the wire format's error answer.
func (Status) Serve(sv Serving) { sv.Answer(true, nil) }

func (s Status) Wire(f *wire.Fault) {
	f.Status, f.RetryAfter, f.ErrorType, f.Message, f.Headers = s.Status, s.RetryAfter, s.ErrorType, s.Message, s.Headers
}

// Stamp writes a retryAfterDate as the date it is for an attempt that
// arrived then.
func (s Status) Stamp(arrived time.Time) (Kind, string) {
	if s.RetryAfterDate <= 0 {
		return s, ""
	}
	v := RetryAfterDate(arrived, s.RetryAfterDate.D())
	s.RetryAfter = &v
	return s, v
}

// RetryAfterDate is the Retry-After of a retryAfterDate fault for an
// attempt that arrived at arrived: the HTTP date d later, rounded up to
// the whole second (the format has no finer unit), so the date is never
// less than d ahead of the arrival.
func RetryAfterDate(arrived time.Time, d time.Duration) string {
	t := arrived.Add(d)
	if r := t.Truncate(time.Second); !r.Equal(t) {
		t = r.Add(time.Second)
	}
	return t.UTC().Format(http.TimeFormat)
}

func (s Status) HTTPStatus() int { return s.Status }

// ResponseHeaders are the headers of the response that carry Retry-After and
// x-should-retry: retry-after as written (or as the mock stamped it),
// then the scenario's own headers (retry-after-ms among them).
func (s Status) ResponseHeaders(m Met) http.Header {
	h := http.Header{}
	if m.RetryAfter != "" {
		h.Set("Retry-After", m.RetryAfter)
	} else if s.RetryAfter != nil {
		h.Set("Retry-After", *s.RetryAfter)
	}
	for k, v := range s.Headers {
		h.Set(k, v)
	}
	return h
}

// Failure reads the headers the mock sent the way the SDKs read them:
// retry-after as written, then the scenario's own headers (retry-after-ms
// among them), and x-should-retry.
func (s Status) Failure(pe *provider.Error, m Met) {
	pe.Kind, pe.Status, pe.ErrorType, pe.Message = provider.KindHTTP, s.Status, s.ErrorType, s.Message
	h := s.ResponseHeaders(m)
	if d, raw, ok := provider.ParseRetryAfter(h, m.Ended); ok || raw != "" {
		pe.RetryAfterRaw = raw
		pe.RetryAfter, pe.HasRetryAfter = d, ok
	}
	if v := h.Get("X-Should-Retry"); v != "" {
		b := v == "true"
		pe.ShouldRetry = &b
	}
}
