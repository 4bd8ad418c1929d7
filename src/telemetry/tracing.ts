import { SpanStatusCode, context, trace, type Attributes, type Span } from "@opentelemetry/api";

/** Charter's tracer, through the API only: a no-op until `startTracing` sets up an SDK. */
const tracer = trace.getTracer("charter");
// Mirrors the OpenTelemetry API's global tracer provider, which is process-wide by nature: set
// by `startTracing`, cleared by its shutdown. A switch, not a cache.
let tracing = false;

/**
 * Runs `fn` (sync or async) inside a span named `name` that ends when `fn` returns or settles
 * (an exception is recorded and rethrown). With tracing off it only calls `fn`: no span, no
 * context switch, nothing allocated.
 */
export function traced<T>(name: string, fn: () => T, attributes?: Attributes): T {
  if (!tracing) return fn();
  return tracer.startActiveSpan(name, attributes === undefined ? {} : { attributes }, (span) => {
    try {
      const out = fn();
      if (out instanceof Promise) {
        return out.then(
          (value: unknown) => {
            span.end();
            return value;
          },
          (err: unknown) => {
            failed(span, err);
            throw err;
          },
        ) as T;
      }
      span.end();
      return out;
    } catch (err) {
      failed(span, err);
      throw err;
    }
  });
}

/** Whether spans are being made (`startTracing` ran and was not shut down). */
export function tracingActive(): boolean {
  return tracing;
}

/** Sets attributes on the span in force (an RPC's status, say); nothing when tracing is off. */
export function annotateSpan(attributes: Attributes): void {
  if (tracing) trace.getActiveSpan()?.setAttributes(attributes);
}

function failed(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** A running trace export; `shutdown` flushes the spans still queued. */
export interface Tracing {
  shutdown(): Promise<void>;
}

/**
 * Sets up the OpenTelemetry SDK: spans batched to an OTLP/HTTP endpoint (protobuf), the context
 * carried across awaits by AsyncLocalStorage, the resource naming the service (and the worker).
 * The SDK is loaded only here, so a server without `tracingOtlpEndpoint` never loads it.
 */
export async function startTracing(options: {
  readonly endpoint: string;
  readonly attributes: Attributes;
}): Promise<Tracing> {
  const [
    { BasicTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { AsyncLocalStorageContextManager },
    { resourceFromAttributes },
  ] = await Promise.all([
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/context-async-hooks"),
    import("@opentelemetry/resources"),
  ]);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "charter", ...options.attributes }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: options.endpoint }), {
        scheduledDelayMillis: 1000,
      }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  tracing = true;
  return {
    async shutdown() {
      tracing = false;
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}
