import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Server, ServerCredentials, status, type Metadata, type ServiceDefinition } from '@grpc/grpc-js';
import { recordingTracing } from '../../../api/tracing/testing.js';
import { connectCri } from './client.js';
import { criMethods } from './proto.js';
import { criRequestAttributes } from './tracing.js';

type Unary = (call: { metadata: Metadata; request: unknown }, callback: (err: { code: number; details: string } | null, value?: object) => void) => void;

void describe('CRI call spans', () => {
  let dir = '';
  let server: Server | undefined;
  let endpoint = '';
  const traceparents: string[] = [];

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'cri-tracing-'));
    endpoint = `unix://${path.join(dir, 'fake.sock')}`;
    const seen = (call: { metadata: Metadata }): void => { traceparents.push(String(call.metadata.get('traceparent')[0] ?? '')); };
    const runPodSandbox: Unary = (call, callback) => { seen(call); callback(null, { podSandboxId: 'sandbox-1' }); };
    const startContainer: Unary = (call, callback) => { seen(call); callback({ code: status.NOT_FOUND, details: 'no container c-9' }); };
    const s = new Server();
    const definition: ServiceDefinition = Object.fromEntries(criMethods('RuntimeService'));
    s.addService(definition, { RunPodSandbox: runPodSandbox, StartContainer: startContainer });
    await new Promise<void>((resolve, reject) => {
      s.bindAsync(endpoint, ServerCredentials.createInsecure(), (err) => { if (err === null) resolve(); else reject(err); });
    });
    server = s;
  });

  after(async () => {
    server?.forceShutdown();
    await rm(dir, { recursive: true, force: true });
  });

  void it('gives each call a client span under the open span, with the pod, the RPC and its status, and sends its trace context', async () => {
    const t = recordingTracing();
    const client = connectCri({ runtimeEndpoint: endpoint, tracer: t.tracer('nodeagent/cri') });
    await t.tracer().inSpan('syncPod', {}, async () => {
      await client.runPodSandbox({ config: { metadata: { name: 'web', namespace: 'default', uid: 'u-1', attempt: 0 } } });
      await assert.rejects(client.startContainer('c-9'), /no container c-9/);
    });
    client.close();
    const sync = t.span('syncPod');
    const run = t.span('runtime.v1.RuntimeService/RunPodSandbox');
    const start = t.span('runtime.v1.RuntimeService/StartContainer');
    for (const span of [run, start]) {
      assert.equal(span.parentSpanId, sync.spanId);
      assert.equal(span.traceId, sync.traceId);
      assert.equal(span.kind, 'client');
      assert.equal(span.attributes['rpc.system'], 'grpc');
      assert.equal(span.attributes['rpc.service'], 'runtime.v1.RuntimeService');
    }
    assert.deepEqual(
      [run.attributes['rpc.method'], run.attributes['k8s.pod.name'], run.attributes['k8s.namespace.name'], run.attributes['k8s.pod.uid'], run.attributes['rpc.grpc.status_code']],
      ['RunPodSandbox', 'web', 'default', 'u-1', 0],
    );
    assert.equal(start.attributes['container.id'], 'c-9');
    assert.equal(start.attributes['rpc.grpc.status_code'], status.NOT_FOUND);
    assert.equal(start.failed, true);
    assert.deepEqual(traceparents, [`00-${run.traceId}-${run.spanId}-01`, `00-${start.traceId}-${start.spanId}-01`]);
  });

  void it('sends no trace context and makes no span without a tracer', async () => {
    traceparents.length = 0;
    const client = connectCri({ runtimeEndpoint: endpoint });
    await client.runPodSandbox({ config: { metadata: { name: 'web', namespace: 'default', uid: 'u-1', attempt: 0 } } });
    client.close();
    assert.deepEqual(traceparents, ['']);
  });

  void it('names the pod and container of CreateContainer and the image of a pull', () => {
    const sandboxConfig = { metadata: { name: 'web', namespace: 'ns', uid: 'u-2', attempt: 1 } };
    assert.deepEqual(criRequestAttributes('CreateContainer', { podSandboxId: 's-1', config: { metadata: { name: 'main', attempt: 0 } }, sandboxConfig }), {
      'k8s.pod.name': 'web', 'k8s.namespace.name': 'ns', 'k8s.pod.uid': 'u-2', 'k8s.container.name': 'main',
      'cri.pod_sandbox.id': 's-1', 'container.id': undefined, 'container.image.name': undefined,
    });
    assert.equal(criRequestAttributes('PullImage', { image: { image: 'busybox:1.35' }, sandboxConfig })['container.image.name'], 'busybox:1.35');
    assert.equal(criRequestAttributes('PullImage', { image: { image: 'busybox:1.35' }, sandboxConfig })['k8s.pod.name'], 'web');
  });
});
