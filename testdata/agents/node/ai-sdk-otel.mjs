// The AI SDK's own OpenTelemetry for ai-sdk.mjs, switched on by
// AI_SDK_OTEL (a scenario's client.env): "otel" registers
// @ai-sdk/otel's OpenTelemetry integration (gen_ai semantic-convention
// spans), "legacy" its LegacyOpenTelemetry (the ai.streamText /
// ai.streamText.doStream spans of AI SDK 4 to 6). Either way the spans go
// through a NodeTracerProvider and a BatchSpanProcessor to an OTLP/HTTP
// protobuf exporter, which reads OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), set by the harness to the scenario's
// receiver. With AI_SDK_OTEL_HTTP=1 Node's fetch is instrumented too
// (@opentelemetry/instrumentation-undici: an HTTP CLIENT span per request
// sent, the semantic conventions), as an application that traces its HTTP
// calls would. Nothing here touches the SDK's retries.
import { trace } from '@opentelemetry/api';
import { NodeTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { OpenTelemetry, LegacyOpenTelemetry } from '@ai-sdk/otel';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { registerTelemetry } from 'ai';

// startTelemetry registers the tracer provider and the SDK integration
// named by kind, and returns the function that flushes and shuts them down
// (called before the process exits).
export function startTelemetry(kind) {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME ?? 'retrylab-ai-sdk' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  if (process.env.AI_SDK_OTEL_HTTP === '1') new UndiciInstrumentation().enable();
  const tracer = trace.getTracer('ai');
  switch (kind) {
    case 'otel':
    case '1':
      registerTelemetry(new OpenTelemetry({ tracer }));
      break;
    case 'legacy':
      registerTelemetry(new LegacyOpenTelemetry({ tracer }));
      break;
    default:
      throw new Error(`ai-sdk-otel.mjs: unknown AI_SDK_OTEL ${kind} (otel or legacy)`);
  }
  return async () => {
    try {
      await provider.forceFlush();
      await provider.shutdown();
    } catch (err) {
      console.error(`ai-sdk telemetry: ${err?.message ?? err}`);
    }
  };
}
