// Package sdkclient is the request loop the retrylab chaos harness expects
// of an external client (docs/chaos.md, "External clients"), shared by the
// anthropic and openai programs: RETRYLAB_REQUESTS requests one after
// another, one line per request on stdout, the error's type and message on
// stderr, exit code 0 when every request succeeded and 1 otherwise.
//
// No trace is written: the SDKs do not say how many attempts a request
// took in every case (a connection error on the last attempt leaves no
// response to read X-Stainless-Retry-Count from), so retrylab checks the
// attempts and waits from its own request journal (docs/sdk-clients.md).
package sdkclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// ErrIncomplete is returned by a request whose stream ended without its
// final event, what an application would check; the SDKs report a cut
// stream as an error themselves, so this is a safety net.
var ErrIncomplete = errors.New("stream ended without its final event")

// Model returns RETRYLAB_MODEL, or def when it is unset.
func Model(def string) string {
	if m := os.Getenv("RETRYLAB_MODEL"); m != "" {
		return m
	}
	return def
}

// Run calls one for request 1..RETRYLAB_REQUESTS and exits the process.
// one returns a short description of the answer, or an error.
func Run(label string, one func(ctx context.Context) (string, error)) { RunThen(label, one, nil) }

// RunThen is Run, calling atExit (if not nil) before the process exits:
// a client flushes its telemetry there.
func RunThen(label string, one func(ctx context.Context) (string, error), atExit func()) {
	n, err := strconv.Atoi(os.Getenv("RETRYLAB_REQUESTS"))
	if err != nil || n < 1 {
		n = 1
	}
	failed := 0
	for i := 1; i <= n; i++ {
		lastAnswer = time.Time{}
		start := time.Now()
		what, err := one(context.Background())
		ms := time.Since(start).Milliseconds()
		if err != nil {
			failed++
			fmt.Printf("%s request %d/%d: failed in %dms\n", label, i, n, ms)
			fmt.Fprintf(os.Stderr, "%s request %d/%d: %s\n", label, i, n, describe(err))
			continue
		}
		fmt.Printf("%s request %d/%d: ok in %dms: %s\n", label, i, n, ms, what)
	}
	if atExit != nil {
		atExit()
	}
	if failed > 0 {
		os.Exit(1)
	}
}

// describe renders err as "type: message" on one line.
func describe(err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	return fmt.Sprintf("%T: %s", err, msg)
}

// lastAnswer is when the previous attempt of the current request was
// answered (its headers, or its failure); zero before the first.
var lastAnswer time.Time

// Timed runs one attempt through next, timed for bench/chaosacc: each
// attempt after the first of a logical request prints "retrylab-sdk-wait
// Nms" on stderr, the time from the previous attempt's answer to this
// attempt as the client saw it. The programs install it as an SDK
// middleware, which runs inside the SDK's retry loop and changes nothing
// it does.
func Timed(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if !lastAnswer.IsZero() {
		fmt.Fprintf(os.Stderr, "retrylab-sdk-wait %.1fms\n", float64(time.Since(lastAnswer).Microseconds())/1000)
	}
	resp, err := next(req)
	lastAnswer = time.Now()
	return resp, err
}
