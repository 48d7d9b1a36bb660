// Command anthropic-otel is the official Anthropic Go SDK
// (github.com/anthropics/anthropic-sdk-go), unchanged and with its default
// retries, instrumented as an OpenTelemetry client should be by the
// semantic conventions and exported with the official OTLP/HTTP exporter
// (go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp:
// protobuf, gzip with OTEL_EXPORTER_OTLP_COMPRESSION=gzip), which reads
// OTEL_EXPORTER_OTLP_ENDPOINT from the environment the harness sets. Each
// request is a gen_ai "chat" span; each HTTP attempt the SDK makes (its
// middleware runs once per attempt) a CLIENT span under it with
// http.request.method, url.full, http.response.status_code,
// http.request.resend_count and error.type. It writes no trace of its own:
// retrylab reads its attempts from the telemetry (check selfReport).
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"retrylab.test/sdkclients/internal/sdkclient"
)

// attemptKey counts the attempts of one request, in its context.
type attemptKey struct{}

func main() {
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "otlp exporter:", err)
		os.Exit(2)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	tracer := tp.Tracer("retrylab.test/anthropic-otel")
	client := anthropic.NewClient(option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		return attempt(tracer, req, next)
	}))
	model := sdkclient.Model("claude-haiku-4-5")
	sdkclient.RunThen("anthropic-go-otel", func(ctx context.Context) (string, error) {
		ctx, span := tracer.Start(ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.provider.name", "anthropic"),
			attribute.String("gen_ai.request.model", model)))
		defer span.End()
		n := 0
		ctx = context.WithValue(ctx, attemptKey{}, &n)
		msg, err := client.Messages.New(ctx, anthropic.MessageNewParams{
			Model:     anthropic.Model(model),
			MaxTokens: 256,
			Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello."))},
		})
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
			return "", err
		}
		return fmt.Sprintf("stop_reason %s", msg.StopReason), nil
	}, func() {
		// Flush every span before the process exits.
		if err := tp.Shutdown(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "otlp export:", err)
		}
	})
}

// attempt runs one HTTP attempt in a CLIENT span, ended when its body is
// read to its end or closed.
func attempt(tracer trace.Tracer, req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	n, _ := req.Context().Value(attemptKey{}).(*int)
	resend := 0
	if n != nil {
		resend = *n
		*n++
	}
	attrs := []attribute.KeyValue{attribute.String("http.request.method", req.Method), attribute.String("url.full", req.URL.String())}
	if resend > 0 {
		attrs = append(attrs, attribute.Int("http.request.resend_count", resend))
	}
	ctx, span := tracer.Start(req.Context(), req.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	resp, err := next(req.WithContext(ctx))
	if err != nil {
		span.SetAttributes(attribute.String("error.type", fmt.Sprintf("%T", err)))
		span.SetStatus(codes.Error, err.Error())
		span.End()
		return resp, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetAttributes(attribute.String("error.type", strconv.Itoa(resp.StatusCode)))
		span.SetStatus(codes.Error, "")
	}
	resp.Body = &spanBody{ReadCloser: resp.Body, span: span}
	return resp, nil
}

// spanBody ends its span at the body's end.
type spanBody struct {
	io.ReadCloser
	span trace.Span
	done bool
}

func (b *spanBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && !b.done {
		b.span.SetAttributes(attribute.String("error.type", fmt.Sprintf("%T", err)))
		b.span.SetStatus(codes.Error, err.Error())
	}
	if err != nil {
		b.end()
	}
	return n, err
}

func (b *spanBody) Close() error {
	b.end()
	return b.ReadCloser.Close()
}

func (b *spanBody) end() {
	if !b.done {
		b.done = true
		b.span.End()
	}
}
