/**
 * A soft memory threshold through the binaries, in API-server mode: memory.available is read
 * as the agent reads it (MemTotal minus the root memory cgroup's working set) just before the
 * agent starts, and the soft threshold set 2 GiB below it, with a 15 s grace period, an
 * evictionMaxPodGracePeriod of 2 s and a 5 s transition period. The machine is shared, so the
 * margins are wide: a pod requesting no memory puts 4 GiB into a memory-backed emptyDir (tmpfs
 * pages are charged to its cgroup), which takes memory.available well below the threshold for
 * real; a Guaranteed pod within its limits runs beside it.
 *
 * MemoryPressure turns True at once, yet the pod is evicted only once the grace period has
 * passed (Failed, Evicted, the message naming memory and the threshold, the DisruptionTarget
 * condition), with the grace period capped at 2 s; its emptyDir goes with it, MemoryPressure
 * turns False after the transition period, and the Guaranteed pod is still running.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { waitFor } from '../helpers/wait.js';

const GIB = 1024 ** 3;
const HOG_MIB = 4096;
const GRACE_S = 15;

let cluster: Cluster;
let thresholdKi = 0;

interface Condition { type: string; status: string; reason?: string; lastTransitionTime?: string }
interface PodStatus { phase?: string; reason?: string; message?: string; conditions?: Condition[] }

/** memory.available as the eviction manager computes it (cgroup v1 root). */
async function memoryAvailable(): Promise<number> {
  const total = Number(/MemTotal:\s+(\d+) kB/.exec(await readFile('/proc/meminfo', 'utf8'))?.[1]) * 1024;
  const usage = Number((await readFile('/sys/fs/cgroup/memory/memory.usage_in_bytes', 'utf8')).trim());
  const inactive = Number(/^total_inactive_file (\d+)$/m.exec(await readFile('/sys/fs/cgroup/memory/memory.stat', 'utf8'))?.[1]);
  assert.ok(Number.isFinite(total) && Number.isFinite(usage) && Number.isFinite(inactive), 'memory.available can be read (cgroup v1)');
  return total - (usage - inactive);
}

async function createPod(name: string, spec: Record<string, unknown>): Promise<void> {
  const body = { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: cluster.node, terminationGracePeriodSeconds: 30, restartPolicy: 'Never', ...spec } };
  const res = await cluster.server.client.request('POST', '/api/v1/namespaces/default/pods', { body });
  assert.equal(res.status, 201, res.text);
}

const container = (command: string, more: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'main', image: cluster.containerd.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', command], ...more,
});

async function statusOf(name: string): Promise<PodStatus> {
  const res = await cluster.server.client.request('GET', `/api/v1/namespaces/default/pods/${name}`);
  return (res.body.status ?? {});
}

async function memoryPressure(): Promise<Condition | undefined> {
  const res = await cluster.server.client.request('GET', `/api/v1/nodes/${cluster.node}`);
  return ((res.body.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === 'MemoryPressure');
}

const conditionIs = (status: string) => async (): Promise<Condition | undefined> => {
  const c = await memoryPressure();
  return c?.status === status ? c : undefined;
};

before(async () => {
  cluster = await startCluster({
    agentArgs: async () => {
      thresholdKi = Math.floor((await memoryAvailable() - 2 * GIB) / 1024);
      return [
        `--eviction-soft=memory.available<${thresholdKi}Ki`, `--eviction-soft-grace-period=memory.available=${GRACE_S}s`,
        '--eviction-max-pod-grace-period=2', '--eviction-pressure-transition-period=5s', '--vmodule=eviction=2',
      ];
    },
  });
});

after(async () => {
  await cluster.stop();
});

void describe('a soft memory threshold', () => {
  void it('evicts the pod over its request once the grace period passed, sparing the Guaranteed pod', async () => {
    assert.equal((await memoryPressure())?.status, 'False');
    await createPod('hog', {
      containers: [container(`dd if=/dev/zero of=/mem/blob bs=1M count=${HOG_MIB} && exec sleep 3600`, {
        resources: { requests: { cpu: '10m' } }, volumeMounts: [{ name: 'mem', mountPath: '/mem' }],
      })],
      volumes: [{ name: 'mem', emptyDir: { medium: 'Memory' } }],
    });
    await waitFor('the hog running', async () => (await statusOf('hog')).phase === 'Running', { timeoutMs: 60_000 });
    await createPod('guaranteed', { containers: [container('exec sleep 3600', { resources: { limits: { cpu: '50m', memory: '64Mi' } } })] });

    const pressure = await waitFor('MemoryPressure True', conditionIs('True'), { timeoutMs: 40_000, intervalMs: 250 });
    assert.equal(pressure.reason, 'NodeagentHasInsufficientMemory');
    const hog = await waitFor('the hog evicted', async () => {
      const s = await statusOf('hog');
      return s.phase === 'Failed' ? s : undefined;
    }, { timeoutMs: 90_000, intervalMs: 250 });
    assert.equal(hog.reason, 'Evicted');
    const message = hog.message ?? '';
    assert.ok(message.startsWith(`The node was low on resource: memory. Threshold quantity: ${thresholdKi}Ki, available: `), message);
    assert.match(message, /Container main was using \d+(Ki|Mi|Gi)?, request is 0, has larger consumption of memory\. $/);
    const disruption = hog.conditions?.find((c) => c.type === 'DisruptionTarget');
    assert.equal(disruption?.reason, 'TerminationByNodeagent');
    const waitedS = (Date.parse(disruption.lastTransitionTime ?? '') - Date.parse(pressure.lastTransitionTime ?? '')) / 1000;
    assert.ok(waitedS >= GRACE_S - 1, `evicted ${waitedS} s after MemoryPressure turned True: not before the grace period`);
    assert.match(cluster.agent.logs(), /Evicting pod pod="default\/hog" podUID="[^"]+" gracePeriodSeconds=2 /, 'the pod\'s 30 s capped by evictionMaxPodGracePeriod');

    await waitFor('MemoryPressure False', conditionIs('False'), { timeoutMs: 60_000, intervalMs: 250 });
    const guaranteed = await statusOf('guaranteed');
    assert.equal(guaranteed.phase, 'Running', 'the Guaranteed pod within its limits is not evicted');
    assert.equal(/Evicting pod pod="default\/guaranteed"/.test(cluster.agent.logs()), false);
  });
});
