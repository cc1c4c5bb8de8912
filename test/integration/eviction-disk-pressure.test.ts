/**
 * Disk pressure through the binaries, in API-server mode with the server's control loops (the
 * node lifecycle controller taints the node from its conditions): containerd's root and the
 * agent's root share a 384 MiB tmpfs of their own, so that nodefs is measured on a file system
 * no other process on the machine writes to. The agent starts with nodefs.available's hard
 * threshold 48 MiB below the free space measured just before, and an image `u` nobody uses.
 *
 * A BestEffort pod writing 96 MiB into an emptyDir crosses the threshold for real: the eviction
 * manager reclaims at node level first (image GC removes `u`), then evicts the writer (Failed,
 * Evicted, the message naming ephemeral-storage and the threshold) while a pod within its
 * ephemeral-storage request stays; DiskPressure turns True with its taint, a new pod bound to
 * the node is refused with upstream's reason; once the writer's emptyDir is gone the space is
 * back, yet DiskPressure stays True until the transition period (20 s) has passed. What kubectl
 * shows (conditions, taints, the pod's status and events) is checked through kubectl.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { importTestImages } from '../helpers/images.js';
import { kubectl as run, kubectlBinaries, type KubectlEnv } from '../helpers/kubectl.js';
import { waitFor } from '../helpers/wait.js';

const MIB = 1024 * 1024;
const MARGIN_MIB = 48;
const WRITE_MIB = 96;
const TRANSITION_S = 20;

let cluster: Cluster;
let cri: CriClient;
let env: KubectlEnv;
let home: string;
let rootDir = '';
let thresholdBytes = 0;
let unused = '';

interface Condition { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }
interface PodStatus { phase?: string; reason?: string; message?: string; conditions?: Condition[] }

const kubectl = async (...args: string[]): Promise<string> => (await run(env, args)).stdout;
const available = async (): Promise<number> => { const s = await statfs(rootDir); return s.bavail * s.bsize; };

async function createPod(name: string, spec: Record<string, unknown>): Promise<void> {
  const body = { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: cluster.node, terminationGracePeriodSeconds: 1, restartPolicy: 'Never', ...spec } };
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

async function diskPressure(): Promise<Condition | undefined> {
  const res = await cluster.server.client.request('GET', `/api/v1/nodes/${cluster.node}`);
  return ((res.body.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === 'DiskPressure');
}

before(async () => {
  const binary = kubectlBinaries(33, 33).get('1.33') ?? '';
  home = await mkdtemp(join(tmpdir(), 'eviction-disk-kubectl-'));
  cluster = await startCluster({
    controllers: true,
    containerd: { rootTmpfsMiB: 384 },
    agentRootDir: (c) => join(c.dir, 'root', 'nodeagent'),
    agentArgs: async (c, root) => {
      unused = (await importTestImages(c.socketPath, [{ name: 'u', randomMiB: 4 }])).get('u') ?? '';
      await mkdir(root, { recursive: true });
      rootDir = root;
      thresholdBytes = await available() - MARGIN_MIB * MIB;
      return [
        `--eviction-hard=nodefs.available<${Math.floor(thresholdBytes / 1024)}Ki`,
        `--eviction-pressure-transition-period=${TRANSITION_S}s`,
        '--volume-stats-agg-period=1s', '--vmodule=eviction=2,gc=2',
      ];
    },
  });
  cri = connectCri({ runtimeEndpoint: cluster.containerd.endpoint, requestTimeoutMs: 30_000 });
  env = { binary, kubeconfig: cluster.server.adminKubeconfig, home };
});

after(async () => {
  cri.close();
  await cluster.stop();
  await rm(home, { recursive: true, force: true });
});

void describe('disk pressure', () => {
  void it('reclaims images, then evicts the BestEffort writer; DiskPressure, its taint and refusals last the transition period', async () => {
    assert.ok((await cri.listImages()).some((i) => i.repoTags.includes(unused)), 'the unused image is there at first');
    await createPod('quiet', { containers: [container('exec sleep 3600', { resources: { requests: { 'ephemeral-storage': '8Mi' } } })] });
    await waitFor('the quiet pod running', async () => (await statusOf('quiet')).phase === 'Running', { timeoutMs: 60_000 });
    assert.equal((await diskPressure())?.status, 'False');

    await createPod('writer', {
      containers: [container(`dd if=/dev/zero of=/scratch/blob bs=1M count=${WRITE_MIB} && exec sleep 3600`, { volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] })],
      volumes: [{ name: 'scratch', emptyDir: {} }],
    });
    const evicted = await waitFor('the writer evicted', async () => {
      const s = await statusOf('writer');
      return s.phase === 'Failed' && s.reason === 'Evicted' ? s : undefined;
    }, { timeoutMs: 60_000, intervalMs: 250 });
    // A pod bound to the node while it has disk pressure is refused at admission.
    await createPod('late', { containers: [container('exec sleep 3600')] });
    const pressure = await waitFor('DiskPressure True', async () => { const c = await diskPressure(); return c?.status === 'True' ? c : undefined; }, { timeoutMs: 20_000 });
    assert.equal(pressure.reason, 'NodeagentHasDiskPressure');

    const message = evicted.message ?? '';
    assert.match(message, /^The node was low on resource: ephemeral-storage\. Threshold quantity: \d+Ki, available: \d+[KMG]?i?\. (Container main was using \S+, request is 0, has larger consumption of ephemeral-storage\. )?$/);
    assert.ok(message.includes(`Threshold quantity: ${Math.floor(thresholdBytes / 1024)}Ki,`), message);
    assert.deepEqual(evicted.conditions?.filter((c) => c.type === 'DisruptionTarget').map((c) => [c.status, c.reason]), [['True', 'TerminationByNodeagent']]);
    assert.equal((await cri.listImages()).some((i) => i.repoTags.includes(unused)), false, 'image GC ran before the eviction');
    assert.match(cluster.agent.logs(), /Attempting to delete unused containers[\s\S]*Attempting to delete unused images[\s\S]*Evicting pod/);

    const late = await waitFor('the late pod refused', async () => { const s = await statusOf('late'); return s.phase === 'Failed' ? s : undefined; }, { timeoutMs: 20_000 });
    assert.equal(late.reason, 'Evicted');
    assert.match(late.message ?? '', /^Pod was rejected: The node had condition: \[DiskPressure\]\. $/);

    // The writer's emptyDir goes with it: the space is back while the condition holds.
    await waitFor('the space freed', async () => await available() > thresholdBytes + 16 * MIB, { timeoutMs: 30_000 });
    assert.equal((await diskPressure())?.status, 'True', 'DiskPressure stays for the transition period');
    const taints = await waitFor('the disk-pressure taint', async () => {
      const out = await kubectl('get', 'node', cluster.node, '-o', 'jsonpath={range .spec.taints[*]}{.key}:{.effect}{"\\n"}{end}');
      return out.includes('node.orch.io/disk-pressure:NoSchedule') ? out : undefined;
    }, { timeoutMs: 20_000 });
    assert.match(taints, /node\.orch\.io\/disk-pressure:NoSchedule/);
    assert.match(await kubectl('get', 'node', cluster.node, '-o', 'jsonpath={.status.conditions[?(@.type=="DiskPressure")].status}'), /^True$/);
    assert.equal(await kubectl('get', 'pod', 'writer', '-o', 'jsonpath={.status.phase}/{.status.reason}'), 'Failed/Evicted');
    assert.match(await kubectl('get', 'events', '--field-selector', 'involvedObject.name=writer,reason=Evicted'), /Warning\s+Evicted\s+pod\/writer\s+The node was low on resource: ephemeral-storage/);
    const nodeEvents = await kubectl('get', 'events', '--field-selector', `involvedObject.kind=Node,involvedObject.name=${cluster.node}`);
    assert.match(nodeEvents, /EvictionThresholdMet\s+node\/\S+\s+Attempting to reclaim ephemeral-storage/);
    assert.match(nodeEvents, /NodeHasDiskPressure/);

    const cleared = await waitFor('DiskPressure False', async () => { const c = await diskPressure(); return c?.status === 'False' ? c : undefined; }, { timeoutMs: 60_000, intervalMs: 250 });
    const heldS = (Date.parse(cleared.lastTransitionTime ?? '') - Date.parse(pressure.lastTransitionTime ?? '')) / 1000;
    assert.ok(heldS >= TRANSITION_S - 1, `DiskPressure held ${heldS} s, at least the transition period`);
    assert.equal(cleared.reason, 'NodeagentHasNoDiskPressure');
    await waitFor('the taint removed', async () => !(await kubectl('get', 'node', cluster.node, '-o', 'jsonpath={.spec.taints}')).includes('disk-pressure'), { timeoutMs: 20_000 });
    assert.equal((await statusOf('quiet')).phase, 'Running', 'the pod within its request stays');
  });
});
