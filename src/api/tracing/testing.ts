/**
 * Tracing for unit tests (never imported by production code): the real provider over the
 * OpenTelemetry SDK, every span sampled and kept in memory as it ends, read back as plain
 * records.
 */
import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
import type { Clock } from '../clock.js';
import { realClock } from '../clock.js';
import { createOtelProvider } from './otel.js';
import type { Tracer, TracingProvider } from './types.js';

/** An ended span as a test reads it. */
export interface RecordedSpan {
  readonly name: string;
  readonly scope: string;
  readonly kind: 'internal' | 'server' | 'client' | 'other';
  readonly traceId: string;
  readonly spanId: string;
  /** The parent's span ID; undefined for a root. */
  readonly parentSpanId: string | undefined;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** True when the span was marked failed. */
  readonly failed: boolean;
  readonly statusMessage: string | undefined;
}

export interface RecordingTracing {
  readonly provider: TracingProvider;
  tracer(scope?: string): Tracer;
  /** The spans ended so far, in the order they ended. */
  spans(): RecordedSpan[];
  /** The one ended span of that name (throws when there is none or several). */
  span(name: string): RecordedSpan;
}

const KIND_NAMES: readonly RecordedSpan['kind'][] = ['internal', 'server', 'client'];

export function recordingTracing(options: { samplingRatePerMillion?: number | null; clock?: Clock } = {}): RecordingTracing {
  const exporter = new InMemorySpanExporter();
  const provider = createOtelProvider({
    endpoint: 'unused:4317', serviceName: 'test', clock: options.clock ?? realClock, exporter,
    samplingRatePerMillion: options.samplingRatePerMillion === undefined ? 1_000_000 : options.samplingRatePerMillion,
  });
  const spans = (): RecordedSpan[] => exporter.getFinishedSpans().map((s) => ({
    name: s.name,
    scope: s.instrumentationScope.name,
    kind: KIND_NAMES[s.kind] ?? 'other',
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parentSpanId: s.parentSpanContext?.spanId,
    attributes: { ...s.attributes },
    failed: s.status.code === SpanStatusCode.ERROR,
    statusMessage: s.status.message,
  }));
  return {
    provider,
    tracer: (scope = 'test') => provider.tracer(scope),
    spans,
    span(name) {
      const found = spans().filter((s) => s.name === name);
      if (found.length !== 1) throw new Error(`expected one span ${name}, got ${found.length}: ${spans().map((s) => s.name).join(', ')}`);
      return found[0] as RecordedSpan;
    },
  };
}
