import assert from 'node:assert/strict';
import { request } from 'node:http';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import type { AddressInfo } from 'node:net';
import { recordingTracing } from '../../api/tracing/testing.js';
import { parseTracingConfig, tracedHandler, TRACING_CONFIG_INVALID } from './index.js';

void describe('--tracing-config-file', () => {
  void it('reads a TracingConfiguration with upstream\'s defaults and refuses what upstream refuses', () => {
    assert.deepEqual(parseTracingConfig('apiVersion: apiserver.config.orch.io/v1\nkind: TracingConfiguration\nendpoint: otel:4317\nsamplingRatePerMillion: 250\n', 'f'),
      { endpoint: 'otel:4317', samplingRatePerMillion: 250 });
    assert.deepEqual(parseTracingConfig('{"apiVersion":"apiserver.config.orch.io/v1beta1","kind":"TracingConfiguration"}', 'f'),
      { endpoint: 'localhost:4317', samplingRatePerMillion: 0 });
    for (const bad of [
      'apiVersion: apiserver.config.orch.io/v1\nkind: TracingConfiguration\nsamplingRatePerMillion: 1000001\n',
      'apiVersion: apiserver.config.orch.io/v1\nkind: TracingConfiguration\nsampling: 1\n',
      'apiVersion: apiserver.config.orch.io/v1\nkind: EgressSelectorConfiguration\n',
      'apiVersion: v1\nkind: TracingConfiguration\n',
    ]) assert.throws(() => parseTracingConfig(bad, 'f'), { code: TRACING_CONFIG_INVALID });
  });
});

void describe('traced requests', () => {
  void it('continues the caller\'s trace context, with the method, path and status code', async () => {
    const t = recordingTracing();
    const caller = t.tracer('client');
    const server = createServer(tracedHandler((_req, res) => { res.statusCode = 201; res.end('ok'); }, t.tracer('orch-apiserver')));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      await caller.inSpan('HTTP POST', { kind: 'client' }, () => new Promise<void>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/api/v1/namespaces/default/pods?dryRun=All', headers: caller.outgoingHeaders() }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', reject);
        req.end();
      }));
      const serverSpan = await (async () => {
        for (let i = 0; i < 100; i++) {
          const found = t.spans().find((s) => s.name === 'KubernetesAPI');
          if (found !== undefined) return found;
          await new Promise((r) => setImmediate(r));
        }
        throw new Error('no server span');
      })();
      const client = t.span('HTTP POST');
      assert.equal(serverSpan.parentSpanId, client.spanId);
      assert.equal(serverSpan.traceId, client.traceId);
      assert.equal(serverSpan.kind, 'server');
      assert.deepEqual([serverSpan.attributes['http.request.method'], serverSpan.attributes['url.path'], serverSpan.attributes['http.response.status_code']],
        ['POST', '/api/v1/namespaces/default/pods', 201]);
    } finally {
      server.close();
    }
  });
});
