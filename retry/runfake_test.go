package retry

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/retrylab/retrylab/trace"
)

// doFakeCtx is doFake with a context of the caller's (a StepContext).
func doFakeCtx(t *testing.T, ctx context.Context, r *Retrier, errs ...error) run {
	t.Helper()
	return captureRun(t, r, func(call func(context.Context, Attempt) (string, error)) error {
		return r.Do(ctx, func(ctx context.Context, a Attempt) error {
			_, err := call(ctx, a)
			return err
		})
	}, nil, errs...)
}

// captureRun runs start (which calls r.Do or r.Run with the call it is
// given) inside the caller's synctest bubble. The k-th attempt returns
// outputs[k] ("" past the end) and errs[k] (nil past the end). attempts
// records every Attempt the call saw.
func captureRun(t *testing.T, r *Retrier, start func(call func(context.Context, Attempt) (string, error)) error, outputs []string, errs ...error) run {
	t.Helper()
	var buf, log bytes.Buffer
	if r.Trace == nil {
		r.Trace = trace.NewWriter(&buf, "test")
	}
	r.Log = &log
	if r.Rand == nil {
		r.Rand = fixedRand(0)
	}
	var out run
	var last time.Time
	begin := time.Now()
	i := 0
	out.err = start(func(ctx context.Context, a Attempt) (string, error) {
		now := time.Now()
		if i > 0 {
			out.gaps = append(out.gaps, now.Sub(last))
		}
		last = now
		out.models = append(out.models, a.Model)
		out.attempts = append(out.attempts, a)
		if a.Number != i+1 {
			t.Errorf("attempt number = %d, want %d", a.Number, i+1)
		}
		i++
		var o string
		if i-1 < len(outputs) {
			o = outputs[i-1]
		}
		if i-1 < len(errs) {
			return o, errs[i-1]
		}
		return o, nil
	})
	out.elapsed = time.Since(begin)
	out.events = decodeEvents(t, buf.Bytes())
	out.log = log.String()
	return out
}
