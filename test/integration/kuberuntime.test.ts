/**
 * The runtime manager against a real containerd (test/helpers/containerd.ts): a host-network
 * pod (env and downward API seen inside, logs in the upstream layout, resources and OOM score
 * in the cgroup), a CNI pod with a host port and cluster DNS, image failures, killPod with a
 * grace period, removePod, and getPodStatus's fields.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { createRuntimeManager, type ContainerVolumes, type PodRuntimeManager, type PodSyncResult, type RuntimePodStatus } from '../../src/agent/kuberuntime/index.js';
import { LogRoot } from '../../src/agent/logging/index.js';
import { connectCri, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { Cleanups, freePort, processesUnder, readTcp, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { waitFor } from '../helpers/wait.js';
import { realClock } from '../../src/api/clock.js';
import type { NodePod } from '../../src/api/pod/index.js';

const HOST_IP = '127.0.0.1';
const GiB = 1024 ** 3;
const logLines: string[] = [];
const logger = new LogRoot({ clock: realClock, format: 'text', verbosity: 4, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: (_s, l) => logLines.push(l) } }).logger('kuberuntime-it');

/** emptyDir volumes as directories under `dir`, hostPath volumes as they are. */
function hostDirVolumes(dir: string): ContainerVolumes {
  return {
    async mountsFor(pod, container) {
      const uid = pod.metadata.uid;
      const mounts = [];
      for (const m of container.volumeMounts ?? []) {
        const volume = pod.spec?.volumes?.find((v) => v.name === m.name);
        const hostPath = volume?.hostPath?.path ?? path.join(dir, uid, 'volumes', m.name);
        await mkdir(hostPath, { recursive: true });
        mounts.push({ containerPath: m.mountPath, hostPath, readonly: m.readOnly === true });
      }
      return mounts;
    },
    containerDir: (pod, container) => path.join(dir, pod.metadata.uid, 'containers', container.name),
  };
}

function podOf(name: string, spec: Partial<Pod['spec']> & { containers: Container[] }): NodePod {
  return { metadata: { name, namespace: 'kr-it', uid: randomUUID(), labels: { app: name }, annotations: { 'kr-it/note': 'hello' } }, spec: { terminationGracePeriodSeconds: 5, ...spec } };
}

void describe('kuberuntime against a real containerd', { timeout: 300_000 }, () => {
  const cleanups = new Cleanups();
  const pods: NodePod[] = [];
  let ctrd: ContainerdInstance;
  let cri: CriClient;
  let manager: PodRuntimeManager;
  let data = '';
  let busybox = '';

  const uidOf = (pod: NodePod): string => pod.metadata.uid;
  const status = (pod: NodePod): Promise<RuntimePodStatus> => manager.getPodStatus(uidOf(pod), pod.metadata.name, 'kr-it');
  const sync = async (pod: NodePod): Promise<PodSyncResult> => manager.syncPod(pod, await status(pod));
  const running = async (pod: NodePod, name: string): Promise<string> =>
    waitFor(`${name} running`, async () => (await status(pod)).containers.find((c) => c.name === name && c.state === 'running')?.id);
  const exec = async (id: string, cmd: string[]): Promise<string> => (await cri.execSync({ containerId: id, cmd, timeout: 10 })).stdout.toString();
  /** What does not change once a container started (its state may, for a short-lived one). */
  const fixed = (s: RuntimePodStatus | undefined): unknown => s === undefined ? undefined : {
    ips: s.ips,
    sandboxes: s.sandboxes,
    containers: s.containers.map(({ id, name, createdAt, startedAt, image, imageRef, restartCount, hash, init }) => ({ id, name, createdAt, startedAt, image, imageRef, restartCount, hash, init })),
  };
  const start = async (pod: NodePod): Promise<void> => {
    pods.push(pod);
    const result = await sync(pod);
    assert.deepEqual(result.errors, []);
    // A new pod's status after its sync is read without listing: the same as a full read.
    assert.deepEqual(fixed(result.status), fixed(await status(pod)));
  };

  before(async () => {
    ctrd = await startContainerd();
    cleanups.push(async () => {
      await ctrd.stop();
      assert.deepEqual(await processesUnder(ctrd.dir), [], 'processes left behind');
    });
    cri = connectCri({ runtimeEndpoint: ctrd.endpoint, requestTimeoutMs: 60_000 });
    cleanups.push(() => {
      cri.close();
    });
    data = await mkdtemp(path.join(os.tmpdir(), 'na-kr-it-'));
    cleanups.push(() => rm(data, { recursive: true, force: true }));
    const resolvConf = path.join(data, 'resolv.conf');
    await writeFile(resolvConf, 'nameserver 192.0.2.53\nsearch node.example\noptions timeout:2\n');
    busybox = ctrd.images.busybox;
    manager = createRuntimeManager({
      clock: realClock,
      runtime: cri, images: cri, logger, podLogsRoot: ctrd.logDir,
      dns: { clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local', resolvConf },
      hostIPs: () => [HOST_IP], nodeName: 'node-it', nodeCapacity: () => ({ cpuMilli: 2000, memoryBytes: GiB }),
      volumes: hostDirVolumes(data), cgroupParent: (pod) => Promise.resolve(`${ctrd.cgroupRoot}/pod${uidOf(pod)}`),
      imageBackOff: { initialMs: 60_000, maxMs: 120_000 },
    });
    cleanups.push(async () => {
      for (const running of await manager.listPods()) {
        await manager.killPod(running, { gracePeriodSeconds: 0 });
        await manager.removePod(running.uid);
      }
    });
  });

  after(async () => {
    await cleanups.run().catch((err: unknown) => {
      process.stderr.write(logLines.join(''));
      throw err;
    });
  });

  void it('a host-network pod: empty hostname, env and downward API inside, logs in the upstream layout, resources and OOM score', async () => {
    const pod = podOf('hostnet', {
      hostNetwork: true,
      containers: [{
        name: 'main', image: busybox,
        command: ['sh', '-c', "echo '$(GREETING) from $(POD_NAME), escaped $$(GREETING), unknown $(NOT_A_VAR)'; exec sleep 3600"],
        env: [
          { name: 'GREETING', value: 'hello' },
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
          { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
          { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
          { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
          { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
          { name: 'MEM_LIMIT_MI', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
          { name: 'CPU_REQUEST_M', valueFrom: { resourceFieldRef: { resource: 'requests.cpu', divisor: '1m' } } },
          { name: 'COMPOSED', value: '$(POD_NAMESPACE)/$(POD_NAME)' },
        ],
        resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
      }],
    });
    await start(pod);
    const id = await running(pod, 'main');
    const env = await exec(id, ['env']);
    const uid = uidOf(pod);
    for (const line of ['GREETING=hello', 'POD_NAME=hostnet', 'POD_NAMESPACE=kr-it', `POD_UID=${uid}`, 'APP=hostnet', 'NODE=node-it', `POD_IP=${HOST_IP}`, `HOST_IP=${HOST_IP}`, 'MEM_LIMIT_MI=512', 'CPU_REQUEST_M=250', 'COMPOSED=kr-it/hostnet']) {
      assert.ok(env.split('\n').includes(line), `${line} in:\n${env}`);
    }
    assert.equal((await exec(id, ['hostname'])).trim(), os.hostname());
    const resolv = await exec(id, ['cat', '/etc/resolv.conf']);
    assert.match(resolv, /^nameserver 192\.0\.2\.53$/m, 'ClusterFirst on the host network is Default');
    assert.match(resolv, /^search node\.example$/m);
    assert.match(resolv, /^options timeout:2$/m);
    const log = path.join(ctrd.logDir, `kr-it_hostnet_${uid}`, 'main', '0.log');
    const text = await waitFor('the container log', async () => (await readFile(log, 'utf8').catch(() => '')) || false);
    assert.match(text, /stdout F hello from hostnet, escaped \$\(GREETING\), unknown \$\(NOT_A_VAR\)\n/);
    assert.equal((await exec(id, ['cat', '/proc/1/oom_score_adj'])).trim(), String(1000 - Math.floor((1000 * 256) / 1024)), 'burstable: 1000 - 1000 × request / capacity');
    const cgroup = (file: string) => readFile(path.join('/sys/fs/cgroup', file.split('.')[0] ?? '', `${ctrd.cgroupRoot}/pod${uid}`, id, file), 'utf8');
    assert.equal((await cgroup('memory.limit_in_bytes')).trim(), String(512 * 1024 * 1024));
    assert.equal((await cgroup('cpu.cfs_quota_us')).trim(), '50000');
    assert.equal((await cgroup('cpu.shares')).trim(), '256');
    const s = await status(pod);
    assert.deepEqual([s.ips, s.sandboxes.length, s.sandboxes[0]?.hostNetwork, s.sandboxes[0]?.state, s.sandboxes[0]?.attempt], [[], 1, true, 'ready', 0]);
  });

  void it('a CNI pod: a pod IP, cluster DNS, its hostname, and a host port on 127.0.0.1', async () => {
    const hostPort = await freePort();
    const pod = podOf('cni', {
      containers: [{ name: 'server', image: busybox, command: ['nc', '-ll', '-p', '8080', '-e', 'echo', 'hi'], ports: [{ containerPort: 8080, hostPort, hostIP: '127.0.0.1' }] }],
    });
    await start(pod);
    const id = await running(pod, 'server');
    assert.equal(await waitFor('the host port', async () => (await readTcp(hostPort, '127.0.0.1').catch(() => '')) || false), 'hi\n');
    const s = await status(pod);
    const ip = s.ips[0] ?? '';
    assert.ok(ip.startsWith(ctrd.subnet.replace(/0\/24$/, '')), `pod IP ${ip} in ${ctrd.subnet}`);
    assert.equal(await readTcp(8080, ip), 'hi\n');
    assert.equal((await exec(id, ['hostname'])).trim(), 'cni');
    const resolv = await exec(id, ['cat', '/etc/resolv.conf']);
    assert.match(resolv, /nameserver 10\.96\.0\.10/);
    assert.match(resolv, /search kr-it\.svc\.cluster\.local svc\.cluster\.local cluster\.local node\.example/);
    assert.match(resolv, /options ndots:5/);
    assert.equal((await exec(id, ['cat', '/proc/1/oom_score_adj'])).trim(), '1000', 'best-effort');
  });

  void it('getPodStatus: image, image ID, restart count, hash, times, init flag', async () => {
    const pod = pods[0];
    assert.ok(pod);
    const [c] = (await status(pod)).containers;
    assert.ok(c);
    assert.deepEqual([c.name, c.state, c.image, c.imageRef, c.restartCount, c.init, c.exitCode], ['main', 'running', busybox, ctrd.imageIds.busybox, 0, false, 0]);
    assert.match(c.hash, /^[0-9a-f]{8}$/);
    assert.ok(c.createdAt > Date.now() - 120_000 && c.startedAt >= c.createdAt && c.finishedAt === 0);
    const listed = await manager.listPods();
    assert.deepEqual(listed.map((p) => p.name).sort(), ['cni', 'hostnet']);
  });

  void it('an image that does not exist: ErrImagePull, then ImagePullBackOff; Never with a missing image: ErrImageNeverPull', async () => {
    const registry = `127.0.0.1:${await freePort()}`;
    const pod = podOf('badimage', {
      hostNetwork: true,
      containers: [
        { name: 'pull', image: `${registry}/nope:1` },
        { name: 'never', image: `${registry}/nope:2`, imagePullPolicy: 'Never' },
        { name: 'ok', image: busybox, command: ['sleep', '3600'] },
      ],
    });
    pods.push(pod);
    const first = await sync(pod);
    assert.deepEqual(first.errors.map((e) => [e.container, e.reason]), [['pull', 'ErrImagePull'], ['never', 'ErrImageNeverPull']]);
    assert.match(first.errors[0]?.message ?? '', new RegExp(`^Failed to pull image "${registry}/nope:1": `));
    assert.equal(first.errors[1]?.message, `Container image "${registry}/nope:2" is not present with pull policy of Never`);
    assert.equal(first.requeueAfterMs, 60_000);
    const second = await sync(pod);
    assert.deepEqual(second.errors.map((e) => [e.container, e.reason]), [['pull', 'ImagePullBackOff'], ['never', 'ErrImageNeverPull']]);
    assert.equal(second.errors[0]?.message, `Back-off pulling image "${registry}/nope:1"`);
    assert.ok((second.requeueAfterMs ?? 0) > 50_000 && (second.requeueAfterMs ?? 0) <= 60_000);
    await running(pod, 'ok');
  });

  void it('killPod: TERM, then KILL after the grace period; the sandbox stops', async () => {
    const pod = podOf('graceful', {
      hostNetwork: true,
      containers: [
        { name: 'polite', image: busybox, command: ['sh', '-c', 'trap "echo got TERM; exit 0" TERM; while true; do sleep 0.1; done'] },
        { name: 'stubborn', image: busybox, command: ['sh', '-c', 'trap "" TERM; while true; do sleep 0.1; done'] },
      ],
    });
    await start(pod);
    await running(pod, 'polite');
    await running(pod, 'stubborn');
    const runningPod = (await manager.listPods()).find((p) => p.uid === uidOf(pod));
    assert.ok(runningPod);
    const started = Date.now();
    await manager.killPod(runningPod, { pod, gracePeriodSeconds: 2 });
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 1_800 && elapsed < 15_000, `killed after ${elapsed} ms`);
    const s = await status(pod);
    const byName = new Map(s.containers.map((c) => [c.name, c]));
    assert.deepEqual([byName.get('polite')?.state, byName.get('polite')?.exitCode], ['exited', 0]);
    assert.deepEqual([byName.get('stubborn')?.state, byName.get('stubborn')?.exitCode], ['exited', 137]);
    assert.equal(s.sandboxes[0]?.state, 'notready');
    const log = await readFile(path.join(ctrd.logDir, `kr-it_graceful_${uidOf(pod)}`, 'polite', '0.log'), 'utf8');
    assert.match(log, /got TERM/);
    await manager.killPod(runningPod, { pod }); // idempotent
  });

  void it('removePod removes the containers, the sandbox and the log directory of that pod only', async () => {
    const pod = pods.find((p) => p.metadata.name === 'graceful');
    assert.ok(pod);
    await manager.removePod(uidOf(pod));
    const s = await status(pod);
    assert.deepEqual([s.sandboxes, s.containers], [[], []]);
    const dirs = await readdir(ctrd.logDir);
    assert.ok(!dirs.some((d) => d.endsWith(uidOf(pod))), 'log directory removed');
    assert.ok(dirs.some((d) => d.startsWith('kr-it_hostnet_')), 'other pods keep theirs');
    assert.ok(!(await manager.listPods()).some((p) => p.uid === uidOf(pod)));
    await manager.removePod(uidOf(pod)); // idempotent
  });
});
