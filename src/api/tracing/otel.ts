/**
 * The tracing provider over the OpenTelemetry SDK for Node: spans from the SDK's tracer,
 * sampled as upstream's components sample (parent-based; traces begun here by
 * samplingRatePerMillion, none when it is unset or 0), batched and exported over OTLP/gRPC
 * without TLS, W3C trace context through the SDK's propagator.
 *
 * The open span is kept in an AsyncLocalStorage of this provider's own: nothing is registered
 * globally (no global tracer provider, context manager or propagator), so the process holds
 * nothing of OpenTelemetry beyond what this provider holds, and tests may run several.
 * index.ts loads this file only when tracing is configured.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { credentials } from '@grpc/grpc-js';
import {
  ROOT_CONTEXT, SpanKind as OtelSpanKind, SpanStatusCode, defaultTextMapGetter, defaultTextMapSetter, trace,
  type Attributes, type Context, type Span,
} from '@opentelemetry/api';
import { ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler, BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler, SimpleSpanProcessor, TraceIdRatioBasedSampler,
  type ReadableSpan, type SpanExporter,
} from '@opentelemetry/sdk-trace-node';
import type { Clock } from '../clock.js';
import { messageOf } from '../errors.js';
import type { SpanAttributes, SpanHandle, SpanKind, SpanOptions, TraceParent, Tracer, TracingProvider, TracingSettings } from './types.js';

const KINDS: Readonly<Record<SpanKind, OtelSpanKind>> = {
  internal: OtelSpanKind.INTERNAL,
  server: OtelSpanKind.SERVER,
  client: OtelSpanKind.CLIENT,
};

/** How long shutdown waits for the last export. */
const SHUTDOWN_WAIT_MS = 5_000;

/** The collector's URL: host:port (upstream's form) means plain http. */
export function collectorUrl(endpoint: string): string {
  return endpoint.includes('://') ? endpoint : `http://${endpoint}`;
}

function attributesOf(a: SpanAttributes | undefined): Attributes {
  const out: Attributes = {};
  if (a === undefined) return out;
  for (const [k, v] of Object.entries(a)) if (v !== undefined) out[k] = v;
  return out;
}

/** Passes every export on, telling `onError` of failures: once per distinct message until one succeeds. */
class ReportingExporter implements SpanExporter {
  private lastError: string | undefined;
  constructor(private readonly inner: SpanExporter, private readonly onError: ((message: string) => void) | undefined) {}

  export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) this.lastError = undefined;
      else {
        const message = `exporting ${spans.length} span(s) failed: ${result.error === undefined ? 'unknown error' : messageOf(result.error)}`;
        if (message !== this.lastError) this.onError?.(message);
        this.lastError = message;
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

export interface OtelProviderOptions extends TracingSettings {
  readonly clock: Clock;
  /** Replaces the OTLP exporter, each span exported as it ends (tests: an in-memory exporter). */
  readonly exporter?: SpanExporter;
}

export function createOtelProvider(o: OtelProviderOptions): TracingProvider {
  const rate = o.samplingRatePerMillion ?? 0;
  const root = rate > 0 ? new TraceIdRatioBasedSampler(Math.min(rate, 1_000_000) / 1_000_000) : new AlwaysOffSampler();
  const exporter = o.exporter ?? new OTLPTraceExporter({ url: collectorUrl(o.endpoint), credentials: credentials.createInsecure() });
  const reporting = new ReportingExporter(exporter, o.onExportError);
  const processor = o.exporter === undefined
    ? new BatchSpanProcessor(reporting, { scheduledDelayMillis: o.exportIntervalMs ?? 5_000 })
    : new SimpleSpanProcessor(reporting);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': o.serviceName, ...(o.hostName === undefined ? {} : { 'host.name': o.hostName }) }),
    sampler: new ParentBasedSampler({ root }),
    spanProcessors: [processor],
  });
  const active = new AsyncLocalStorage<Context>();
  const propagator = new W3CTraceContextPropagator();
  /** Spans begun and not ended: only those parent work started under them. */
  const open = new WeakSet<Span>();

  function parentContext(parent: SpanOptions['parent']): Context {
    if (parent === 'root') return ROOT_CONTEXT;
    if (parent !== undefined) return propagator.extract(ROOT_CONTEXT, parent, defaultTextMapGetter);
    const current = active.getStore();
    const span = current === undefined ? undefined : trace.getSpan(current);
    return current !== undefined && span !== undefined && open.has(span) ? current : ROOT_CONTEXT;
  }

  function asParent(context: Context): TraceParent {
    const carrier: Record<string, string> = {};
    propagator.inject(context, carrier, defaultTextMapSetter);
    const traceparent = carrier.traceparent ?? '';
    return carrier.tracestate === undefined ? { traceparent } : { traceparent, tracestate: carrier.tracestate };
  }

  function tracer(scope: string): Tracer {
    const otel = provider.getTracer(scope);
    const start = (name: string, options: SpanOptions, parent: Context): Span =>
      otel.startSpan(name, { kind: KINDS[options.kind ?? 'internal'], attributes: attributesOf(options.attributes) }, parent);
    return {
      async inSpan<T>(name: string, options: SpanOptions, fn: (span: SpanHandle) => Promise<T>): Promise<T> {
        const parent = parentContext(options.parent);
        const span = start(name, options, parent);
        open.add(span);
        const handle: SpanHandle = { setAttributes: (a) => { span.setAttributes(attributesOf(a)); } };
        try {
          return await active.run(trace.setSpan(parent, span), () => fn(handle));
        } catch (err) {
          span.recordException(err instanceof Error ? err : messageOf(err));
          span.setStatus({ code: SpanStatusCode.ERROR, message: messageOf(err) });
          throw err;
        } finally {
          open.delete(span);
          span.end();
        }
      },
      point(name, options) {
        const parent = parentContext(options.parent);
        const span = start(name, options, parent);
        span.end();
        return asParent(trace.setSpan(parent, span));
      },
      outgoingHeaders() {
        const context = parentContext(undefined);
        if (context === ROOT_CONTEXT) return {};
        const { traceparent, tracestate } = asParent(context);
        return tracestate === undefined ? { traceparent } : { traceparent, tracestate };
      },
    };
  }

  return {
    tracer,
    async shutdown() {
      const waited = new AbortController();
      try {
        await Promise.race([provider.shutdown(), o.clock.sleep(SHUTDOWN_WAIT_MS, waited.signal)]);
      } finally {
        waited.abort();
      }
    },
  };
}
