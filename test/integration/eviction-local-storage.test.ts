/**
 * Local storage limits enforced by eviction (localStorageCapacityIsolation), on a real
 * containerd with the real nodeagent in API-server mode (static pods are never evicted, as
 * upstream's): a pod writing past its emptyDir's sizeLimit, a container writing past its
 * ephemeral-storage limit into its writable layer, and a pod whose emptyDir takes it past the
 * sum of its containers' limits each end Failed with reason Evicted, a message naming the limit
 * (and no DisruptionTarget condition: upstream's local storage evictions carry none) and an
 * Evicted event, while a neighbour within its limits keeps running. The volumes are measured every second (--volume-stats-agg-period=1s); containerd
 * measures writable layers every 10 s. Each pod writes 24 MiB on the machine's own disk.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { kubectl as run, kubectlBinaries, type KubectlEnv } from '../helpers/kubectl.js';
import { waitFor } from '../helpers/wait.js';

let cluster: Cluster;
let env: KubectlEnv;
let home: string;

interface PodStatus { phase?: string; reason?: string; message?: string; conditions?: { type: string }[] }

const kubectl = async (...args: string[]): Promise<string> => (await run(env, args)).stdout;

async function createPod(name: string, container: Record<string, unknown>, volumes: unknown[] = [], more: Record<string, unknown>[] = []): Promise<void> {
  const image = { image: cluster.containerd.images.busybox, imagePullPolicy: 'IfNotPresent' };
  const body = {
    apiVersion: 'v1', kind: 'Pod', metadata: { name },
    spec: {
      nodeName: cluster.node, terminationGracePeriodSeconds: 1, restartPolicy: 'Never', volumes,
      containers: [{ name: 'main', ...image, ...container }, ...more.map((c) => ({ ...image, ...c }))],
    },
  };
  const res = await cluster.server.client.request('POST', '/api/v1/namespaces/default/pods', { body });
  assert.equal(res.status, 201, res.text);
}

async function statusOf(name: string): Promise<PodStatus> {
  const res = await cluster.server.client.request('GET', `/api/v1/namespaces/default/pods/${name}`);
  return (res.body.status ?? {});
}

async function evicted(name: string): Promise<PodStatus> {
  return waitFor(`pod ${name} evicted`, async () => {
    const s = await statusOf(name);
    return s.phase === 'Failed' && s.reason === 'Evicted' ? s : undefined;
  }, { timeoutMs: 90_000, intervalMs: 500 });
}

before(async () => {
  const binary = kubectlBinaries(33, 33).get('1.33') ?? '';
  home = await mkdtemp(join(tmpdir(), 'eviction-storage-kubectl-'));
  cluster = await startCluster({ agentArgs: () => ['--volume-stats-agg-period=1s', '--vmodule=eviction=3'] });
  env = { binary, kubeconfig: cluster.server.adminKubeconfig, home };
  await createPod('neighbour', { command: ['sh', '-c', 'dd if=/dev/zero of=/data/blob bs=1M count=2 && exec sleep 3600'], volumeMounts: [{ name: 'data', mountPath: '/data' }],
    resources: { limits: { 'ephemeral-storage': '100Mi' } } }, [{ name: 'data', emptyDir: { sizeLimit: '50Mi' } }]);
  await waitFor('the neighbour running', async () => (await statusOf('neighbour')).phase === 'Running', { timeoutMs: 60_000 });
});

after(async () => {
  await cluster.stop();
  await rm(home, { recursive: true, force: true });
});

void describe('local storage limits', () => {
  void it('evict a pod whose emptyDir passes its sizeLimit, naming the volume and the limit', async () => {
    await createPod('filler', {
      command: ['sh', '-c', 'dd if=/dev/zero of=/scratch/blob bs=1M count=24 && exec sleep 3600'], volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
    }, [{ name: 'scratch', emptyDir: { sizeLimit: '10Mi' } }]);
    const s = await evicted('filler');
    assert.equal(s.message, 'Usage of EmptyDir volume "scratch" exceeds the limit "10Mi". ');
    assert.equal(s.conditions?.some((c) => c.type === 'DisruptionTarget'), false);
    const events = await waitFor('the Evicted event', async () => {
      const out = await kubectl('get', 'events', '--field-selector', 'involvedObject.name=filler,reason=Evicted');
      return out.includes('Usage of EmptyDir volume "scratch" exceeds the limit "10Mi"') ? out : undefined;
    }, { timeoutMs: 30_000 });
    assert.match(events, /Warning\s+Evicted/);
    const described = await kubectl('get', 'pod', 'filler', '-o', 'jsonpath={.status.phase}/{.status.reason}');
    assert.equal(described, 'Failed/Evicted');
  });

  void it('evict a pod whose container writes past its ephemeral-storage limit (the pod within the sum of its limits)', async () => {
    await createPod('layer', {
      command: ['sh', '-c', 'dd if=/dev/zero of=/blob bs=1M count=24 && exec sleep 3600'],
      resources: { limits: { 'ephemeral-storage': '10Mi' } },
    }, [], [{ name: 'idle', command: ['sleep', '3600'], resources: { limits: { 'ephemeral-storage': '100Mi' } } }]);
    const s = await evicted('layer');
    assert.equal(s.message, 'Container main exceeded its local ephemeral storage limit "10Mi". ');
    assert.match(await kubectl('get', 'events', '--field-selector', 'involvedObject.name=layer,reason=Evicted'), /exceeded its local ephemeral storage limit/);
    assert.equal((await statusOf('neighbour')).phase, 'Running', 'the neighbour within its limits keeps running');
  });

  void it('evict a pod whose ephemeral storage (an emptyDir without sizeLimit counted in) passes the sum of its containers\' limits', async () => {
    await createPod('total', {
      command: ['sh', '-c', 'dd if=/dev/zero of=/scratch/blob bs=1M count=24 && exec sleep 3600'], volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
      resources: { limits: { 'ephemeral-storage': '10Mi' } },
    }, [{ name: 'scratch', emptyDir: {} }]);
    const s = await evicted('total');
    assert.equal(s.message, 'Pod ephemeral local storage usage exceeds the total limit of containers 10Mi. ');
  });
});
