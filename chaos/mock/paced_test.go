package mock

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrylab/retrylab/chaos/fault"
	"github.com/retrylab/retrylab/chaos/scenario"
	"github.com/retrylab/retrylab/internal/wire"
	"github.com/retrylab/retrylab/trace"
)

// pacedServing is a fault.Serving that records what a paced kind (slow,
// stall) writes, byte for byte, and the waits it asks for; its Wait lets
// waits through, then reports the peer gone. The methods a paced kind does
// not call are the nil embedded interface's: calling one panics.
type pacedServing struct {
	fault.Serving
	p        respParams
	waits    []time.Duration
	waitsLet int // Waits that run their course
	out      bytes.Buffer
	cut      bool
	ended    string // "end" or the closedBy of FinishWhenGone
}

func (s *pacedServing) OK() *wire.Response  { return okResponse(s.p) }
func (s *pacedServing) Logf(string, ...any) {}

func (s *pacedServing) Wait(d time.Duration) bool {
	s.waits = append(s.waits, d)
	if len(s.waits) > s.waitsLet {
		s.cut = true
	}
	return !s.cut
}

func (s *pacedServing) Start(r *wire.Response) bool { return s.put(r.Head) }

func (s *pacedServing) Piece(r *wire.Response, b []byte) bool {
	one := wire.Response{Chunked: r.Chunked, Pieces: [][]byte{b}}
	return s.put(one.Wire(0))
}

func (s *pacedServing) End(r *wire.Response) {
	s.put(r.Trailer())
	s.ended = "end"
}

func (s *pacedServing) FinishWhenGone(closedBy string) { s.ended = closedBy }

func (s *pacedServing) put(b []byte) bool {
	if !s.cut {
		s.out.Write(b)
	}
	return !s.cut
}

// goldenPrefix names a format's golden files.
var goldenPrefix = map[string]string{wire.ProviderAnthropic: "anthropic", wire.ProviderOpenAI: "openai", wire.ProviderResponses: "responses", wire.ProviderGemini: "gemini"}

// TestStallGolden pins a stall's bytes in every format, streamed and not:
// the head, the first two events and two keepalives (the format's own,
// chunk-framed like every event); a request that did not ask for a stream
// gets the head of its JSON answer and nothing more. Each keepalive waits
// the stall's interval, and the attempt is left to the client to close.
func TestStallGolden(t *testing.T) {
	t.Parallel()
	every := scenario.Duration(5 * time.Second)
	for _, name := range wire.Names() {
		for _, stream := range []bool{true, false} {
			f := scenario.Fault{Kind: fault.Stall{AfterEvents: 2, Keepalive: &every}}
			p := goldenParams(name, f)
			p.asks.NonStream = !stream
			s := &pacedServing{p: p, waitsLet: 2}
			f.Kind.(fault.Server).Serve(s)
			file := goldenPrefix[name] + "_stall.golden"
			wantWaits := []time.Duration{5 * time.Second, 5 * time.Second, 5 * time.Second}
			if !stream {
				file = goldenPrefix[name] + "_stall_message.golden"
				wantWaits = nil
			}
			golden(t, file, s.out.Bytes())
			if diff := cmp.Diff(wantWaits, s.waits); diff != "" || s.ended != trace.ClosedByClient {
				t.Errorf("%s: waits mismatch (-want +got):\n%s; ended %q", file, diff, s.ended)
			}
		}
	}
}

// TestSlowPaced: a slow answer is the ok answer, byte for byte, its first
// byte after firstByte and each further piece perEvent after the one
// before; a client that goes mid-way gets no end of body.
func TestSlowPaced(t *testing.T) {
	t.Parallel()
	slow := fault.Slow{FirstByte: scenario.Duration(10 * time.Second), PerEvent: scenario.Duration(300 * time.Millisecond)}
	for _, name := range wire.Names() {
		for _, stream := range []bool{true, false} {
			p := goldenParams(name, scenario.Fault{Kind: slow})
			p.asks.NonStream = !stream
			ok := okResponse(p)
			s := &pacedServing{p: p, waitsLet: 1 << 20}
			slow.Serve(s)
			want := []time.Duration{10 * time.Second}
			for range len(ok.Pieces) - 1 {
				want = append(want, 300*time.Millisecond)
			}
			if diff := cmp.Diff(string(ok.Bytes()), s.out.String()); diff != "" || s.ended != "end" {
				t.Errorf("%s stream=%v: bytes mismatch (-want +got):\n%s; ended %q", name, stream, diff, s.ended)
			}
			if diff := cmp.Diff(want, s.waits); diff != "" {
				t.Errorf("%s stream=%v: waits mismatch (-want +got):\n%s", name, stream, diff)
			}
			gone := &pacedServing{p: p, waitsLet: 1}
			slow.Serve(gone)
			if stream && (bytes.HasSuffix(gone.out.Bytes(), ok.Trailer()) || !bytes.HasPrefix(ok.Bytes(), gone.out.Bytes())) {
				t.Errorf("%s: a client gone after the first event got %q", name, gone.out.Bytes())
			}
		}
	}
}

// TestPacedInEveryFormat serves stall and slow through the mock, in every
// format, streamed and not: what a client reads and what the journal says.
func TestPacedInEveryFormat(t *testing.T) {
	toxi := startToxi(t)
	every := scenario.Duration(20 * time.Millisecond)
	for _, name := range wire.Names() {
		fc := formatClients[name]
		for _, stream := range []bool{true, false} {
			mode := map[bool]string{true: "stream", false: "whole"}[stream]
			t.Run(name+"/"+mode+"/stall", func(t *testing.T) {
				e := startEnv(t, toxi, name, scenario.Fault{Kind: fault.Stall{AfterEvents: 2, Keepalive: &every}})
				ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
				defer cancel()
				resp, body, err := postFormat(t, ctx, e.BaseURL(), fc.reqPath(stream), stream)
				a := waitAttempts(t, e, 1)[0]
				if !errors.Is(err, context.DeadlineExceeded) || resp.StatusCode != 200 || a.Status != 200 || a.ClosedBy != trace.ClosedByClient {
					t.Fatalf("got %v %v, attempt %+v", resp, err, a)
				}
				ka := string(wire.Must(name).Keepalive())
				if n := len(sseEvents(body)); stream && (n < 2 || strings.Count(string(body), ka) < 2) {
					t.Errorf("got %d events and %d keepalives, want 2 events then keepalives:\n%s", n, strings.Count(string(body), ka), body)
				}
				if !stream && len(body) != 0 {
					t.Errorf("a stalled JSON answer sent %q", body)
				}
			})
			t.Run(name+"/"+mode+"/slow", func(t *testing.T) {
				e := startEnvWith(t, EnvConfig{Toxi: toxi, TimeScale: 0.01, Scenario: &scenario.Scenario{Name: strings.ReplaceAll(t.Name(), "/", "_"), Provider: name,
					Attempts: []scenario.Fault{{Kind: fault.Slow{FirstByte: scenario.Duration(2 * time.Second), PerEvent: scenario.Duration(100 * time.Millisecond)}}}}})
				start := time.Now()
				resp, body, err := postFormat(t, t.Context(), e.BaseURL(), fc.reqPath(stream), stream)
				took := time.Since(start)
				a := waitAttempts(t, e, 1)[0]
				if err != nil || resp.StatusCode != 200 || fc.text(t, body, stream) != wire.DefaultText || a.ClosedBy != trace.ClosedByServer {
					t.Fatalf("got %v %v, attempt %+v", resp, err, a)
				}
				// 2s of policy time at timeScale 0.01: the first byte is 20ms late.
				if took < 20*time.Millisecond {
					t.Errorf("answered after %s, before its first byte's 20ms", took)
				}
			})
		}
	}
}
