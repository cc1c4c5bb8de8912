import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Metadata, credentials, type Client, type GrpcObject, type ServiceClientConstructor } from '@grpc/grpc-js';
import { FakeClock } from '../../api/fake-clock.js';
import { grpcPackage, unaryCall } from '../../api/grpc-proto.js';
import type { NodePod } from '../../api/pod/index.js';
import { FakeLogger } from '../logging/testing.js';
import { createPodResourcesServer, type PodResourcesServer } from './server.js';

let dir = '';
let server: PodResourcesServer;
let client: Client;
const gates = new Set<string>();
const clock = new FakeClock();

const pods: NodePod[] = [{
  metadata: { name: 'gpu', namespace: 'ml', uid: 'u1' },
  spec: { initContainers: [{ name: 'side', image: 'x', restartPolicy: 'Always' }, { name: 'setup', image: 'x' }], containers: [{ name: 'main', image: 'x' }] },
}];

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'podresources-'));
  server = createPodResourcesServer({
    dir, gates: { enabled: (g) => gates.has(g) }, clock, logger: new FakeLogger(),
    sources: {
      pods: () => pods,
      devices: {
        devicesOf: (uid, container) => (uid === 'u1' && container === 'main'
          ? [{ resourceName: 'example.com/dev', deviceId: 'd0', numaNode: 0 }, { resourceName: 'example.com/dev', deviceId: 'd9', numaNode: undefined }] : []),
        allocatableDevices: () => [{ resourceName: 'example.com/dev', deviceId: 'd1', numaNode: 1 }],
        updateAllocated: () => undefined,
      },
      assignments: () => ({
        exclusiveCPUs: (uid, container) => (uid === 'u1' && container === 'main' ? [2, 3] : []),
        allocatableCPUs: () => [1, 2, 3],
        memory: (uid, container) => (uid === 'u1' && container === 'main' ? [{ type: 'memory', bytes: 1024, numaNodes: [0] }] : []),
        allocatableMemory: () => [{ type: 'hugepages-2Mi', bytes: 2097152, numaNodes: [1] }],
      }),
    },
  });
  await server.start();
  const pkg = grpcPackage('podresources-v1.proto')['v1'] as GrpcObject;
  const Lister = pkg['PodResourcesLister'] as ServiceClientConstructor;
  client = new Lister(`unix://${server.socketPath}`, credentials.createInsecure());
});

after(async () => {
  client.close();
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

const call = <T>(method: string, request: object = {}): Promise<T> => unaryCall<T>(client, method, request, new Metadata(), 5_000);

void describe('the pod resources API', () => {
  void it('lists devices by NUMA node, exclusive CPUs and memory of each container; sidecars only with their gate', async () => {
    await clock.advance(1_000);
    const list = await call<{ podResources: { name: string; namespace: string; containers: { name: string; devices: unknown[]; cpuIds: number[]; memory: unknown[] }[] }[] }>('List');
    assert.deepEqual(list.podResources.map((p) => [p.namespace, p.name, p.containers.map((c) => c.name)]), [['ml', 'gpu', ['main']]]);
    const main = list.podResources[0]?.containers[0];
    assert.ok(main !== undefined);
    assert.deepEqual(main.devices, [
      { resourceName: 'example.com/dev', deviceIds: ['d0'], topology: { nodes: [{ ID: 0 }] } },
      { resourceName: 'example.com/dev', deviceIds: ['d9'], topology: null },
    ]);
    assert.deepEqual(main.cpuIds, [2, 3]);
    assert.deepEqual(main.memory, [{ memoryType: 'memory', size: 1024, topology: { nodes: [{ ID: 0 }] } }]);
    gates.add('SidecarContainers');
    const withSidecars = await call<{ podResources: { containers: { name: string }[] }[] }>('List');
    assert.deepEqual(withSidecars.podResources[0]?.containers.map((c) => c.name), ['side', 'main']);
    gates.delete('SidecarContainers');
    const allocatable = await call<{ devices: unknown[]; cpuIds: number[]; memory: unknown[] }>('GetAllocatableResources');
    assert.deepEqual(allocatable, {
      devices: [{ resourceName: 'example.com/dev', deviceIds: ['d1'], topology: { nodes: [{ ID: 1 }] } }], cpuIds: [1, 2, 3],
      memory: [{ memoryType: 'hugepages-2Mi', size: 2097152, topology: { nodes: [{ ID: 1 }] } }],
    });
  });

  void it('answers Get only with the NodeagentPodResourcesGet gate, naming it, and a missing pod by name', async () => {
    await clock.advance(1_000);
    await assert.rejects(call('Get', { podName: 'gpu', podNamespace: 'ml' }), (err: { details: string }) => /NodeagentPodResourcesGet feature gate is off/.test(err.details));
    gates.add('NodeagentPodResourcesGet');
    const one = await call<{ podResources: { name: string } }>('Get', { podName: 'gpu', podNamespace: 'ml' });
    assert.equal(one.podResources.name, 'gpu');
    await assert.rejects(call('Get', { podName: 'nope', podNamespace: 'ml' }), (err: { code: number; details: string }) => err.code === 5 && err.details === 'pod nope in namespace ml not found');
  });

  void it('refuses calls beyond a burst of 10 until tokens come back at 100 a second', async () => {
    await clock.advance(1_000);
    const results = await Promise.allSettled(Array.from({ length: 12 }, () => call('GetAllocatableResources')));
    const refused = results.filter((r) => r.status === 'rejected').map((r) => (r.reason as { code: number; details: string }));
    assert.equal(refused.length, 2);
    assert.deepEqual([refused[0]?.code, refused[0]?.details], [8, 'rejected by rate limit']);
    await clock.advance(10);
    await call('GetAllocatableResources');
  });
});
