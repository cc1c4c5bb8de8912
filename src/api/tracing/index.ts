/**
 * tracing: OpenTelemetry traces of both binaries, exported over OTLP/gRPC as upstream's
 * kubelet and kube-apiserver export them. Modules take a `Tracer | undefined` (types.ts) and
 * trace through `traced`; the composition roots start a provider only when tracing is
 * configured (`startTracing` loads the SDK then, and only then).
 *
 * Owns: the provider (SDK, sampling, batching, export, W3C trace context), the span that is
 * open where work runs, and reading a caller's trace context from request headers.
 * Must not: be loaded (the SDK) by a binary whose tracing is off, register anything globally,
 * or decide what is traced (the modules and their decorators do).
 */
import type { Clock } from '../clock.js';
import type { SpanHandle, SpanOptions, TraceParent, Tracer, TracingProvider, TracingSettings } from './types.js';

export type { SpanAttributes, SpanHandle, SpanKind, SpanOptions, TraceParent, Tracer, TracingProvider, TracingSettings } from './types.js';

/** The collector upstream's components export to when the configuration names none. */
export const DEFAULT_TRACING_ENDPOINT = 'localhost:4317';

/** Starts exporting; loads the OpenTelemetry SDK. Nothing is sent before the first span ends. */
export async function startTracing(settings: TracingSettings & { readonly clock: Clock }): Promise<TracingProvider> {
  const { createOtelProvider } = await import('./otel.js');
  return createOtelProvider(settings);
}

const NO_SPAN: SpanHandle = { setAttributes: () => undefined };

/** `fn` in a span of `tracer`; without a tracer, `fn` alone. */
export function traced<T>(tracer: Tracer | undefined, name: string, options: SpanOptions | (() => SpanOptions), fn: (span: SpanHandle) => Promise<T>): Promise<T> {
  if (tracer === undefined) return fn(NO_SPAN);
  return tracer.inSpan(name, typeof options === 'function' ? options() : options, fn);
}

/** The caller's trace context in request headers (traceparent, tracestate), if it sent one. */
export function incomingTraceParent(headers: Readonly<Record<string, string | string[] | undefined>>): TraceParent | undefined {
  const traceparent = headers.traceparent;
  if (typeof traceparent !== 'string' || traceparent === '') return undefined;
  const tracestate = headers.tracestate;
  const state = Array.isArray(tracestate) ? tracestate.join(',') : tracestate;
  return state === undefined || state === '' ? { traceparent } : { traceparent, tracestate: state };
}

/** The trace ID of a TraceParent (32 hex digits), or undefined when it is not W3C trace context. */
export function traceIdOf(parent: TraceParent): string | undefined {
  return /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(parent.traceparent)?.[1];
}

/**
 * Trace contexts handed from where work was asked for to where it runs later, by key (a pod's
 * UID: the span of the source that brought a pod parents the pod's next sync). One per key, the
 * latest; taking one removes it, so that the map holds only contexts not yet used.
 */
export class TraceParents {
  private readonly parents = new Map<string, TraceParent>();

  set(key: string, parent: TraceParent): void {
    this.parents.set(key, parent);
  }

  /** The context left for `key`, removed; undefined when none was. */
  take(key: string): TraceParent | undefined {
    const parent = this.parents.get(key);
    if (parent !== undefined) this.parents.delete(key);
    return parent;
  }

  delete(key: string): void {
    this.parents.delete(key);
  }
}
