/**
 * The tracing vocabulary both binaries' modules use. It names no OpenTelemetry type: a module
 * that traces holds a `Tracer | undefined` and, with undefined (tracing off), runs exactly the
 * code it ran before, so that an agent or API server without tracing loads no SDK and creates
 * no span.
 */

export type SpanKind = 'internal' | 'server' | 'client';

/** Span attributes; undefined values are left out. */
export type SpanAttributes = Readonly<Record<string, string | number | boolean | undefined>>;

/**
 * A span's place in a trace as W3C trace context (the `traceparent` and `tracestate` header
 * values): what parents work done later or elsewhere (a pod's first sync under the span of
 * the source that brought the pod; a server's span under its remote caller's).
 */
export interface TraceParent {
  readonly traceparent: string;
  readonly tracestate?: string;
}

export interface SpanOptions {
  readonly kind?: SpanKind;
  readonly attributes?: SpanAttributes;
  /**
   * The span's parent: a TraceParent, or 'root' for a new trace. Absent: the span open where
   * the call is made, if one is; a span that has ended parents nothing (work it left behind,
   * such as a timer set during it, starts traces of its own).
   */
  readonly parent?: TraceParent | 'root';
}

/** The span a traced piece of work runs in. */
export interface SpanHandle {
  /** Adds attributes learnt during the work (a response's status code). */
  setAttributes(attributes: SpanAttributes): void;
}

export interface Tracer {
  /**
   * Runs `fn` in a new span that ends when the promise `fn` returns settles; a rejection marks
   * the span failed (with the error) and is passed on unchanged. Work `fn` starts has the span
   * as its parent.
   */
  inSpan<T>(name: string, options: SpanOptions, fn: (span: SpanHandle) => Promise<T>): Promise<T>;
  /** A span that starts and ends now (a moment in a trace, e.g. a pod seen by a source); returns it as a parent. */
  point(name: string, options: SpanOptions): TraceParent;
  /** The trace context headers (`traceparent`, `tracestate`) of the open span, for an outgoing request; empty with none. */
  outgoingHeaders(): Readonly<Record<string, string>>;
}

export interface TracingProvider {
  /** The tracer of one instrumentation scope (e.g. `nodeagent/cri`). */
  tracer(scope: string): Tracer;
  /** Exports the spans still queued (bounded wait) and stops exporting. */
  shutdown(): Promise<void>;
}

export interface TracingSettings {
  /** host:port of an OTLP/gRPC collector, or an http:// URL; insecure (no TLS), as upstream's. */
  readonly endpoint: string;
  /** Spans sampled per million traces begun here; null or 0: none (a caller's sampled trace is still followed). */
  readonly samplingRatePerMillion: number | null;
  /** service.name of the exported resource (nodeagent, orch-apiserver). */
  readonly serviceName: string;
  /** host.name of the exported resource. */
  readonly hostName?: string;
  /** How often queued spans are exported, ms (default 5000, the SDK's; OTEL_BSP_SCHEDULE_DELAY). */
  readonly exportIntervalMs?: number;
  /** Told when an export fails (once per distinct message until one succeeds). */
  readonly onExportError?: (message: string) => void;
}
