package otlp

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// Signal is one of OTLP's signals, named as in its URL path (/v1/traces).
type Signal string

// The signals a Receiver accepts.
const (
	Traces  Signal = "traces"
	Logs    Signal = "logs"
	Metrics Signal = "metrics"
)

// Encoding is how an OTLP body is encoded.
type Encoding string

// The encodings of OTLP/HTTP.
const (
	JSON     Encoding = "json"
	Protobuf Encoding = "protobuf"
)

// ErrContentType is returned by EncodingOf for a content type OTLP/HTTP
// does not have.
var ErrContentType = errors.New("unsupported content type")

// EncodingOf returns the encoding a Content-Type header names:
// application/json or application/x-protobuf (parameters ignored).
func EncodingOf(contentType string) (Encoding, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.TrimSpace(strings.ToLower(contentType))
	}
	switch mt {
	case "application/json":
		return JSON, nil
	case "application/x-protobuf", "application/protobuf":
		return Protobuf, nil
	}
	return "", fmt.Errorf("%w %q: OTLP/HTTP sends application/json or application/x-protobuf", ErrContentType, contentType)
}

// Payload is one decoded export: exactly one of its fields is set, as
// Signal says.
type Payload struct {
	Signal  Signal
	Traces  ptrace.Traces
	Logs    plog.Logs
	Metrics pmetric.Metrics
}

// Decode decodes one export request body of signal sig in encoding enc.
func Decode(sig Signal, enc Encoding, body []byte) (Payload, error) {
	p := Payload{Signal: sig}
	var err error
	switch sig {
	case Traces:
		r := ptraceotlp.NewExportRequest()
		err = unmarshal(enc, body, r.UnmarshalJSON, r.UnmarshalProto)
		p.Traces = r.Traces()
	case Logs:
		r := plogotlp.NewExportRequest()
		err = unmarshal(enc, body, r.UnmarshalJSON, r.UnmarshalProto)
		p.Logs = r.Logs()
	case Metrics:
		r := pmetricotlp.NewExportRequest()
		err = unmarshal(enc, body, r.UnmarshalJSON, r.UnmarshalProto)
		p.Metrics = r.Metrics()
	default:
		return p, fmt.Errorf("unknown signal %q", sig)
	}
	if err != nil {
		return p, fmt.Errorf("decoding OTLP %s as %s: %w", sig, enc, err)
	}
	return p, nil
}

func unmarshal(enc Encoding, body []byte, fromJSON, fromProto func([]byte) error) error {
	if enc == Protobuf {
		return fromProto(body)
	}
	return fromJSON(body)
}

// Items counts the spans, log records or data points of p.
func (p Payload) Items() int {
	switch p.Signal {
	case Traces:
		return p.Traces.SpanCount()
	case Logs:
		return p.Logs.LogRecordCount()
	case Metrics:
		return p.Metrics.DataPointCount()
	}
	return 0
}

// JSON encodes p as OTLP/JSON (the form a Collector's file exporter
// writes, one export per line).
func (p Payload) JSON() ([]byte, error) {
	switch p.Signal {
	case Traces:
		return (&ptrace.JSONMarshaler{}).MarshalTraces(p.Traces)
	case Logs:
		return (&plog.JSONMarshaler{}).MarshalLogs(p.Logs)
	case Metrics:
		return (&pmetric.JSONMarshaler{}).MarshalMetrics(p.Metrics)
	}
	return nil, fmt.Errorf("unknown signal %q", p.Signal)
}

// ParseJSON reads one OTLP/JSON export of any signal (traces, logs or
// metrics: told apart by its top-level key), as a Collector's file
// exporter writes them.
func ParseJSON(line []byte) (Payload, error) {
	s := string(line[:min(len(line), 64<<10)])
	for _, c := range []struct {
		key string
		sig Signal
	}{{`"resourceSpans"`, Traces}, {`"resourceLogs"`, Logs}, {`"resourceMetrics"`, Metrics}} {
		if strings.Contains(s, c.key) {
			return Decode(c.sig, JSON, line)
		}
	}
	return Payload{}, errors.New("not OTLP/JSON: no resourceSpans, resourceLogs or resourceMetrics")
}

// readBody reads at most limit bytes of r, gunzipping when gz; it reports
// tooBig when there were more.
func readBody(r io.Reader, gz bool, limit int64) (body []byte, tooBig bool, err error) {
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, false, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		r = zr
	}
	body, err = io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(body)) > limit {
		return nil, true, nil
	}
	return body, false, nil
}
