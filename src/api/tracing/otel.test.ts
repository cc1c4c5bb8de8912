import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-node';
import { FakeClock, settle } from '../fake-clock.js';
import { incomingTraceParent, traced } from './index.js';
import { collectorUrl, createOtelProvider } from './otel.js';
import { recordingTracing } from './testing.js';

void describe('tracing provider', () => {
  void it('parents the spans work starts on the span it runs in, across awaits', async () => {
    const t = recordingTracing();
    const tracer = t.tracer('nodeagent/test');
    await tracer.inSpan('outer', { attributes: { 'k8s.pod.name': 'web', skipped: undefined } }, async () => {
      await Promise.resolve();
      await tracer.inSpan('inner', { kind: 'client' }, async () => { await settle(1); });
      await traced(tracer, 'second', () => ({ attributes: { n: 2 } }), () => Promise.resolve());
    });
    const outer = t.span('outer');
    assert.equal(outer.parentSpanId, undefined);
    assert.deepEqual(outer.attributes, { 'k8s.pod.name': 'web' });
    assert.equal(outer.scope, 'nodeagent/test');
    for (const name of ['inner', 'second']) {
      const child = t.span(name);
      assert.equal(child.traceId, outer.traceId);
      assert.equal(child.parentSpanId, outer.spanId);
    }
    assert.equal(t.span('inner').kind, 'client');
  });

  void it('starts a new trace for work a span left behind after it ended, and for root', async () => {
    const t = recordingTracing();
    const tracer = t.tracer();
    let later: Promise<void> | undefined;
    await tracer.inSpan('sync', {}, async () => {
      later = new Promise((resolve) => { setImmediate(() => { resolve(tracer.inSpan('probe', {}, () => Promise.resolve())); }); });
      await tracer.inSpan('fresh', { parent: 'root' }, () => Promise.resolve());
    });
    await later;
    assert.equal(t.span('probe').parentSpanId, undefined);
    assert.notEqual(t.span('probe').traceId, t.span('sync').traceId);
    assert.equal(t.span('fresh').parentSpanId, undefined);
    assert.notEqual(t.span('fresh').traceId, t.span('sync').traceId);
  });

  void it('parents later work on a point span through its W3C trace context', async () => {
    const t = recordingTracing();
    const tracer = t.tracer();
    const parent = tracer.point('podsource.add', { attributes: { source: 'file' } });
    assert.match(parent.traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    await tracer.inSpan('syncPod', { parent }, () => Promise.resolve());
    assert.equal(t.span('syncPod').parentSpanId, t.span('podsource.add').spanId);
    assert.equal(t.span('syncPod').traceId, t.span('podsource.add').traceId);
  });

  void it('gives the open span as outgoing headers, and nothing outside one', async () => {
    const t = recordingTracing();
    const tracer = t.tracer();
    assert.deepEqual(tracer.outgoingHeaders(), {});
    let headers: Readonly<Record<string, string>> = {};
    await tracer.inSpan('request', {}, () => { headers = tracer.outgoingHeaders(); return Promise.resolve(); });
    const span = t.span('request');
    assert.equal(headers.traceparent, `00-${span.traceId}-${span.spanId}-01`);
    // A server continues the trace its caller sent.
    const incoming = incomingTraceParent({ traceparent: headers.traceparent, tracestate: ['a=1', 'b=2'] });
    assert.deepEqual(incoming, { traceparent: headers.traceparent, tracestate: 'a=1,b=2' });
    await tracer.inSpan('served', { kind: 'server', parent: incoming }, () => Promise.resolve());
    assert.equal(t.span('served').parentSpanId, span.spanId);
    assert.equal(incomingTraceParent({}), undefined);
  });

  void it('marks a span failed with the error and passes the rejection on', async () => {
    const t = recordingTracing();
    await assert.rejects(t.tracer().inSpan('pull', {}, () => Promise.reject(new Error('no such image'))), /no such image/);
    assert.equal(t.span('pull').failed, true);
    assert.equal(t.span('pull').statusMessage, 'no such image');
  });

  void it('samples by samplingRatePerMillion for traces begun here and follows a sampled caller', async () => {
    const none = recordingTracing({ samplingRatePerMillion: null });
    const tracer = none.tracer();
    const parent = tracer.point('root', {});
    assert.match(parent.traceparent, /-00$/);
    await tracer.inSpan('child', { parent }, () => Promise.resolve());
    await tracer.inSpan('zero', {}, () => Promise.resolve());
    assert.deepEqual(none.spans(), []);
    const sampledCaller = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await tracer.inSpan('served', { parent: { traceparent: sampledCaller } }, () => Promise.resolve());
    assert.equal(none.span('served').traceId, '0af7651916cd43dd8448eb211c80319c');
  });

  void it('reports a failing export once per distinct message, and bounds shutdown', async () => {
    const errors: string[] = [];
    let fail = true;
    const exporter: SpanExporter = {
      export(_spans: ReadableSpan[], done) { done(fail ? { code: ExportResultCode.FAILED, error: new Error('connection refused') } : { code: ExportResultCode.SUCCESS }); },
      shutdown: () => new Promise<void>(() => undefined), // never ends: the provider's wait does
    };
    const clock = new FakeClock();
    const provider = createOtelProvider({ endpoint: 'x:1', serviceName: 't', samplingRatePerMillion: 1_000_000, clock, exporter, onExportError: (m) => errors.push(m) });
    const tracer = provider.tracer('t');
    await tracer.inSpan('a', {}, () => Promise.resolve());
    await tracer.inSpan('b', {}, () => Promise.resolve());
    fail = false;
    await tracer.inSpan('c', {}, () => Promise.resolve());
    fail = true;
    await tracer.inSpan('d', {}, () => Promise.resolve());
    assert.deepEqual(errors, ['exporting 1 span(s) failed: connection refused', 'exporting 1 span(s) failed: connection refused']);
    let stopped = false;
    const stopping = provider.shutdown().then(() => { stopped = true; });
    await settle();
    assert.equal(stopped, false);
    await clock.advance(5_000);
    await stopping;
    assert.equal(stopped, true);
  });

  void it('reads upstream\'s host:port endpoint as plain http', () => {
    assert.equal(collectorUrl('localhost:4317'), 'http://localhost:4317');
    assert.equal(collectorUrl('http://10.0.0.1:4317'), 'http://10.0.0.1:4317');
  });
});
