package otlp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Limits bound what one client may send a Receiver. A zero field takes its
// default.
type Limits struct {
	// Body is the most one export may be, after gzip; larger is 413.
	Body int64
	// Total is the most kept of all exports (decompressed bytes); past it
	// exports are answered 200 but dropped and counted.
	Total int64
	// Items is the most spans, log records and data points kept; past it,
	// likewise.
	Items int
}

// Default limits.
const (
	DefaultBody  = 4 << 20
	DefaultTotal = 32 << 20
	DefaultItems = 100_000
)

func (l Limits) withDefaults() Limits {
	if l.Body <= 0 {
		l.Body = DefaultBody
	}
	if l.Total <= 0 {
		l.Total = DefaultTotal
	}
	if l.Items <= 0 {
		l.Items = DefaultItems
	}
	return l
}

// Stats count what a Receiver was sent.
type Stats struct {
	Exports      int   `json:"exports"`      // requests to /v1/*
	Kept         int   `json:"kept"`         // exports decoded and kept
	Dropped      int   `json:"dropped"`      // decoded but over Limits.Total or Items: answered 200, not kept
	Rejected     int   `json:"rejected"`     // answered 4xx
	Items        int   `json:"items"`        // spans, log records, data points kept
	DroppedItems int   `json:"droppedItems"` // of the dropped exports
	Bytes        int64 `json:"bytes"`        // decompressed bytes kept
}

// Config configures Start.
type Config struct {
	Limits Limits
	// Keep, if set, is called with each export that is kept, in arrival
	// order, n its 1-based number among its signal's; its error is
	// answered 500.
	Keep func(p Payload, n int) error
}

// Receiver is an OTLP/HTTP receiver on 127.0.0.1. The caller should call
// Close when finished; what was kept stays readable after.
type Receiver struct {
	cfg Config
	ln  net.Listener
	srv *http.Server

	mu    sync.Mutex
	kept  []Payload
	count map[Signal]int
	stats Stats
}

// Start starts a Receiver on 127.0.0.1:0.
func Start(cfg Config) (*Receiver, error) {
	cfg.Limits = cfg.Limits.withDefaults()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("otlp: listen: %w", err)
	}
	r := &Receiver{cfg: cfg, ln: ln, count: map[Signal]int{}}
	mux := http.NewServeMux()
	for _, s := range []Signal{Traces, Logs, Metrics} {
		mux.Handle("/v1/"+string(s), r.handler(s))
	}
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

// URL is the receiver's base URL, http://127.0.0.1:PORT, the value of
// OTEL_EXPORTER_OTLP_ENDPOINT.
func (r *Receiver) URL() string { return "http://" + r.ln.Addr().String() }

// Env is what a client is told in its environment to send its telemetry
// here over OTLP/HTTP: the endpoint for every signal and each signal's own.
func (r *Receiver) Env() []string {
	u := r.URL()
	return []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + u,
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + u + "/v1/traces",
		"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=" + u + "/v1/logs",
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=" + u + "/v1/metrics",
	}
}

// Close stops the receiver, letting exports in progress finish (up to a
// few seconds: a client's exporter flushes as it exits).
func (r *Receiver) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = r.srv.Close()
	}
	return err
}

// Limits returns the receiver's bounds, defaults filled in.
func (r *Receiver) Limits() Limits { return r.cfg.Limits }

// Payloads returns the exports kept, in arrival order.
func (r *Receiver) Payloads() []Payload {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Payload(nil), r.kept...)
}

// Stats returns the receiver's counts so far.
func (r *Receiver) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

func (r *Receiver) reject(w http.ResponseWriter, code int, msg string) {
	r.mu.Lock()
	r.stats.Rejected++
	r.mu.Unlock()
	http.Error(w, msg, code)
}

func (r *Receiver) handler(sig Signal) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.stats.Exports++
		r.mu.Unlock()
		if req.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			r.reject(w, http.StatusMethodNotAllowed, "OTLP/HTTP exports are POSTed")
			return
		}
		enc, err := EncodingOf(req.Header.Get("Content-Type"))
		if err != nil {
			r.reject(w, http.StatusUnsupportedMediaType, err.Error())
			return
		}
		gz := false
		switch ce := strings.ToLower(strings.TrimSpace(req.Header.Get("Content-Encoding"))); ce {
		case "", "identity":
		case "gzip":
			gz = true
		default:
			r.reject(w, http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported Content-Encoding %q: send gzip or none", ce))
			return
		}
		body, tooBig, err := readBody(http.MaxBytesReader(w, req.Body, r.cfg.Limits.Body+1), gz, r.cfg.Limits.Body)
		var mbe *http.MaxBytesError
		switch {
		case tooBig || errors.As(err, &mbe):
			r.reject(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("an export may be at most %d bytes", r.cfg.Limits.Body))
			return
		case err != nil:
			r.reject(w, http.StatusBadRequest, err.Error())
			return
		}
		p, err := Decode(sig, enc, body)
		if err != nil {
			r.reject(w, http.StatusBadRequest, err.Error())
			return
		}
		if err := r.keep(p, int64(len(body))); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		respond(w, enc)
	}
}

// keep records p unless it is over the limits (then it is counted as
// dropped), and hands it to Config.Keep.
func (r *Receiver) keep(p Payload, size int64) error {
	items := p.Items()
	r.mu.Lock()
	l := r.cfg.Limits
	if r.stats.Bytes+size > l.Total || r.stats.Items+items > l.Items {
		r.stats.Dropped++
		r.stats.DroppedItems += items
		r.mu.Unlock()
		return nil
	}
	r.stats.Kept++
	r.stats.Items += items
	r.stats.Bytes += size
	r.count[p.Signal]++
	n := r.count[p.Signal]
	r.kept = append(r.kept, p)
	keep := r.cfg.Keep
	// Keep is called under the lock so that files are numbered in order.
	defer r.mu.Unlock()
	if keep != nil {
		return keep(p, n)
	}
	return nil
}

// respond writes 200 and an empty Export*ServiceResponse in enc: {} in
// JSON, no bytes in protobuf (pdata would write an empty partialSuccess,
// which some exporters log as a partial success).
func respond(w http.ResponseWriter, enc Encoding) {
	ct, body := "application/json", []byte("{}")
	if enc == Protobuf {
		ct, body = "application/x-protobuf", nil
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}
