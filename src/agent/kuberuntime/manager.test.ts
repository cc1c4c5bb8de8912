import assert from 'node:assert/strict';
import { access, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { OrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import { LogRoot } from '../logging/index.js';
import type { CreateContainerRequest, RunPodSandboxRequest, StopContainerRequest } from '../runtime/cri/index.js';
import { FakeRuntime } from '../runtime/cri/testing.js';
import { createRuntimeManager } from './manager.js';
import { createPodStatusCache } from './status-cache.js';
import type { ManagerImages, RuntimeManagerOptions } from './options.js';
import type { PodRuntimeManager, PodSyncResult } from './types.js';
import type { NodePod } from '../../api/pod/index.js';

const logger = new LogRoot({ clock: new FakeClock(), format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('test');
const IMAGE = 'busybox:1.35';

let root = '';
before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'na-kuberuntime-'));
});
after(() => rm(root, { recursive: true, force: true }));

interface Env {
  fake: FakeRuntime;
  manager: PodRuntimeManager;
  clock: FakeClock;
  logs: string;
  readonly sync: (pod: NodePod) => Promise<PodSyncResult>;
}

let n = 0;
function env(extra: Partial<RuntimeManagerOptions> = {}): Env {
  const clock = new FakeClock(1_700_000_000_000);
  const fake = new FakeRuntime(() => clock.now());
  fake.images.set(IMAGE, 'sha256:busybox');
  const logs = path.join(root, `logs-${++n}`);
  const manager = createRuntimeManager({
    runtime: fake, images: fake, logger, clock, podLogsRoot: logs,
    dns: { clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local', resolvConf: '' },
    hostIPs: () => ['192.168.0.2'], nodeName: 'node-1', nodeCapacity: () => ({ cpuMilli: 2000, memoryBytes: 2 ** 32 }),
    volumes: { mountsFor: () => Promise.resolve([]), containerDir: (pod, c) => path.join(root, `pods-${n}`, pod.metadata.uid, c.name) },
    cgroupParent: (pod) => Promise.resolve(`/test/pod${pod.metadata.uid}`),
    containerBackOff: { initialMs: 10_000, maxMs: 300_000 },
    ...extra,
  });
  const sync = async (pod: NodePod) => manager.syncPod(pod, await manager.getPodStatus(pod.metadata.uid, pod.metadata.name, pod.metadata.namespace));
  return { fake, manager, clock, logs, sync };
}

function pod(spec: Partial<Pod['spec']> = {}, uid = `uid-${++n}`): NodePod {
  return { metadata: { name: 'web', namespace: 'shop', uid }, spec: { containers: [{ name: 'app', image: IMAGE }], terminationGracePeriodSeconds: 7, ...spec } };
}

/** A sync result without the status read after it (checked on its own where it matters). */
function withoutStatus(r: PodSyncResult): Omit<PodSyncResult, 'status'> {
  const { status: _status, ...rest } = r;
  return rest;
}

function created(fake: FakeRuntime): CreateContainerRequest[] {
  return fake.callsOf('createContainer') as CreateContainerRequest[];
}

function running(fake: FakeRuntime, name: string): string {
  const c = [...fake.containers.values()].find((x) => x.config.metadata.name === name && x.state === 'CONTAINER_RUNNING');
  assert.ok(c, `${name} is running`);
  return c.id;
}

void describe('syncPod', () => {
  void it('creates the log directory, the sandbox and the containers; a second pass does nothing', async () => {
    const { fake, sync, logs, manager } = env();
    const p = pod({ containers: [{ name: 'app', image: IMAGE, env: [{ name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }] }, { name: 'side', image: IMAGE }] });
    const first = await sync(p);
    assert.deepEqual(first.errors, []);
    // What a new pod holds after its sync is known: read without listing (the sandbox's status,
    // read for its IPs, serves again), and the same as a read gives.
    const lastStart = fake.calls.map((c) => c.method).lastIndexOf('startContainer');
    assert.deepEqual(fake.calls.slice(lastStart + 1).map((c) => c.method), ['containerStatus', 'containerStatus']);
    const read = await manager.getPodStatus(p.metadata.uid, 'web', 'shop');
    assert.deepEqual({ ...first.status, timestamp: 0 }, { ...read, timestamp: 0 });
    assert.deepEqual(read.containers.map((c) => [c.name, c.state]), [['side', 'running'], ['app', 'running']]);
    const [run] = fake.callsOf('runPodSandbox') as RunPodSandboxRequest[];
    assert.equal(run?.config.linux?.cgroupParent, `/test/pod${p.metadata.uid}`);
    assert.deepEqual(run.config.dnsConfig?.servers, ['10.96.0.10']);
    const logDir = path.join(logs, `shop_web_${p.metadata.uid}`);
    assert.equal(((await stat(logDir)).mode & 0o777).toString(8), '755');
    assert.deepEqual(created(fake).map((c) => c.config.metadata), [{ name: 'app', attempt: 0 }, { name: 'side', attempt: 0 }]);
    assert.deepEqual(created(fake)[0]?.config.envs, [{ key: 'IP', value: '10.88.0.2' }]);
    assert.equal(created(fake)[0]?.sandboxConfig.linux?.cgroupParent, run.config.linux.cgroupParent, 'sandbox_config passed');
    assert.ok((created(fake)[0]?.config.mounts ?? []).some((m) => m.containerPath === '/dev/termination-log'));
    await access(path.join(logDir, 'app'));
    const callsBefore = fake.calls.length;
    assert.deepEqual(await sync(p), { errors: [] });
    assert.deepEqual(fake.calls.slice(callsBefore).map((c) => c.method).filter((m) => !m.startsWith('list') && !m.endsWith('Status')), []);
  });

  void it('starts an ephemeral container in the running pod once, in its target\'s process namespace; a missing target is a config error', async () => {
    const { fake, sync, manager } = env();
    const p = pod();
    await sync(p);
    const target = running(fake, 'app');
    const withDebug = { ...p, spec: { ...p.spec, containers: p.spec?.containers ?? [], ephemeralContainers: [{ name: 'debugger', image: IMAGE, targetContainerName: 'app' }] } };
    assert.deepEqual((await sync(withDebug)).errors, []);
    const debug = created(fake).at(-1);
    assert.equal(debug?.config.metadata.name, 'debugger');
    assert.equal(debug.config.labels?.['io.orch.container.type'], 'ephemeral');
    assert.deepEqual(debug.config.linux?.securityContext?.namespaceOptions, { network: 'POD', pid: 'TARGET', ipc: 'POD', targetId: target });
    const held = await manager.getPodStatus(p.metadata.uid, 'web', 'shop');
    assert.equal(held.containers.find((c) => c.name === 'debugger')?.ephemeral, true);
    fake.exit(running(fake, 'debugger'), 0);
    const before = created(fake).length;
    await sync(withDebug);
    assert.equal(created(fake).length, before, 'an ephemeral container never restarts');
    const lost = { ...withDebug, spec: { ...withDebug.spec, ephemeralContainers: [...withDebug.spec.ephemeralContainers, { name: 'dbg2', image: IMAGE, targetContainerName: 'nope' }] } };
    const r = await sync(lost);
    assert.deepEqual(r.errors.map((e) => [e.container, e.reason, e.message]), [['dbg2', 'CreateContainerConfigError', 'unable to find target container nope']]);
  });

  void it('gives the status after a sync only when the pod held nothing and everything started', async () => {
    const { fake, sync, manager } = env();
    const host = pod({ hostNetwork: true });
    const first = await sync(host);
    const lastStart = fake.calls.map((c) => c.method).lastIndexOf('startContainer');
    assert.deepEqual(fake.calls.slice(lastStart + 1).map((c) => c.method), ['podSandboxStatus', 'containerStatus']);
    assert.deepEqual({ ...first.status, timestamp: 0 }, { ...(await manager.getPodStatus(host.metadata.uid, 'web', 'shop')), timestamp: 0 });
    fake.exit(running(fake, 'app'), 1);
    const restarted = await sync(host);
    assert.equal(restarted.status, undefined, 'a pod that held a container is read again by the caller');
  });

  void it('keeps no status of a pod whose sync left problems: the next change the PLEG sees syncs it', async () => {
    const clock = new FakeClock(1_700_000_000_000);
    const cache = createPodStatusCache({ clock });
    const { sync } = env({ statusCache: cache, clock });
    const p = pod({ hostNetwork: true, containers: [{ name: 'app', image: IMAGE }, { name: 'absent', image: 'absent:1', imagePullPolicy: 'Never' }] });
    const seenAt = clock.now() - 1;
    const stillNeeded = cache.observe(p.metadata.uid, [], seenAt);
    const missing = await sync(p);
    assert.deepEqual(missing.errors.map((e) => e.reason), ['ErrImageNeverPull']);
    assert.deepEqual(missing.status?.containers.map((c) => [c.name, c.state]), [['app', 'running']], 'read past the cache, for the caller');
    assert.equal(stillNeeded?.(), true, 'nothing kept that would explain the change');
  });

  void it('restarts an exited container at once, then backs off (CrashLoopBackOff, doubling), with the time left', async () => {
    const { fake, sync, clock } = env();
    const p = pod();
    const uid = p.metadata.uid;
    await sync(p);
    fake.exit(running(fake, 'app'), 1);
    assert.deepEqual(await sync(p), { errors: [] }, 'the first restart is immediate');
    assert.equal(created(fake).at(-1)?.config.metadata.attempt, 1);
    clock.set(clock.now() + 1000);
    fake.exit(running(fake, 'app'), 1);
    clock.set(clock.now() + 3000);
    const r = await sync(p);
    assert.deepEqual(withoutStatus(r), {
      errors: [{ container: 'app', reason: 'CrashLoopBackOff', message: `back-off 10s restarting failed container=app pod=web_shop(${uid})` }],
      requeueAfterMs: 7000,
    });
    clock.set(clock.now() + 7000);
    assert.deepEqual(await sync(p), { errors: [] });
    assert.equal(created(fake).at(-1)?.config.metadata.attempt, 2);
    assert.equal(created(fake).at(-1)?.config.logPath, 'app/2.log');
    fake.exit(running(fake, 'app'), 1);
    const again = await sync(p);
    assert.equal(again.errors[0]?.message.startsWith('back-off 20s'), true);
    assert.equal(again.requeueAfterMs, 20_000);
  });

  void it('restartPolicy Never: an exited container stays; the sandbox is stopped', async () => {
    const { fake, sync } = env();
    const p = pod({ restartPolicy: 'Never' });
    await sync(p);
    fake.exit(running(fake, 'app'), 0);
    assert.deepEqual(await sync(p), { errors: [] });
    assert.equal(created(fake).length, 1);
    assert.equal(fake.callsOf('stopPodSandbox').length, 1);
  });

  void it('runs init containers one at a time, then the containers', async () => {
    const { fake, sync } = env();
    const p = pod({ initContainers: [{ name: 'i1', image: IMAGE }, { name: 'i2', image: IMAGE }] });
    await sync(p);
    assert.deepEqual(created(fake).map((c) => c.config.metadata.name), ['i1']);
    assert.equal(created(fake)[0]?.config.labels?.['io.orch.container.type'], 'init');
    await sync(p);
    assert.equal(created(fake).length, 1, 'nothing new while i1 runs');
    fake.exit(running(fake, 'i1'), 0);
    await sync(p);
    fake.exit(running(fake, 'i2'), 0);
    await sync(p);
    assert.deepEqual(created(fake).map((c) => c.config.metadata.name), ['i1', 'i2', 'app']);
  });

  void it('a spec change kills that container with the grace period and starts it again, counting on', async () => {
    const { fake, sync } = env();
    const p = pod({ containers: [{ name: 'app', image: IMAGE }, { name: 'side', image: IMAGE }] });
    await sync(p);
    const old = running(fake, 'app');
    const side = running(fake, 'side');
    const changed: NodePod = { ...p, spec: { ...p.spec, containers: [{ name: 'app', image: IMAGE, args: ['new'] }, { name: 'side', image: IMAGE }] } };
    assert.deepEqual(await sync(changed), { errors: [] });
    assert.deepEqual(fake.callsOf('stopContainer'), [{ containerId: old, timeout: 7 }]);
    assert.deepEqual(created(fake).at(-1)?.config.metadata, { name: 'app', attempt: 1 });
    assert.equal(running(fake, 'side'), side);
  });

  void it('a dead sandbox: kill, new sandbox with the next attempt, init containers purged and run again', async () => {
    const { fake, sync } = env();
    const p = pod({ initContainers: [{ name: 'i1', image: IMAGE }] });
    await sync(p);
    fake.exit(running(fake, 'i1'), 0);
    await sync(p);
    const [first] = [...fake.sandboxes.keys()];
    await fake.stopPodSandbox(first ?? '');
    await sync(p);
    const runs = fake.callsOf('runPodSandbox') as RunPodSandboxRequest[];
    assert.deepEqual(runs.map((r) => r.config.metadata.attempt), [0, 1]);
    assert.equal([...fake.containers.values()].filter((c) => c.config.metadata.name === 'i1').length, 1, 'the old init container was removed');
    assert.equal(created(fake).at(-1)?.config.metadata.name, 'i1');
    assert.equal(created(fake).at(-1)?.config.metadata.attempt, 1, 'the restart count continues');
  });

  void it('reports each failing step with its reason', async () => {
    const { fake, sync } = env();
    fake.failNext('runPodSandbox', new OrchError('CRI_ERROR', 'internal', 'no network'));
    assert.deepEqual(withoutStatus(await sync(pod())), { errors: [{ reason: 'CreatePodSandboxError', message: 'failed to create pod sandbox: no network' }] });
    const p = pod({ containers: [{ name: 'a', image: IMAGE }, { name: 'b', image: IMAGE }, { name: 'c', image: 'absent:1', imagePullPolicy: 'Never' }, { name: 'd', image: IMAGE, env: [{ name: 'S', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] }] });
    fake.failNext('createContainer', new OrchError('CRI_ERROR', 'internal', 'bad mount'));
    fake.failNext('startContainer', new OrchError('CRI_ERROR', 'internal', 'exec: not found'));
    const r = await sync(p);
    assert.deepEqual(r.errors.map((e) => [e.container, e.reason]), [['a', 'CreateContainerError'], ['b', 'RunContainerError'], ['c', 'ErrImageNeverPull'], ['d', 'CreateContainerConfigError']]);
    assert.match(r.errors[3]?.message ?? '', /env S: secretKeyRef "s" \(key "k"\) names a Secret of the API server, and this agent runs without one/);
    const b = [...fake.containers.values()].find((c) => c.config.metadata.name === 'b');
    assert.equal(b?.reason, 'StartError', 'a failed start is left to the runtime, as upstream');
    const next = await sync(p);
    assert.deepEqual(next.errors.map((e) => [e.container, e.reason]), [['c', 'ErrImageNeverPull'], ['d', 'CreateContainerConfigError']], 'a and b started this time');
  });

  void it('rejects when the runtime is unreachable', async () => {
    const { fake, sync } = env();
    fake.failNext('runPodSandbox', new OrchError('CRI_UNAVAILABLE', 'unavailable', 'connection refused'));
    await assert.rejects(sync(pod()), { code: 'CRI_UNAVAILABLE' });
  });

  void it('starts at most maxConcurrentPodStarts pods at once, each from its sandbox to its first container start', async () => {
    const { fake, sync } = env({ maxConcurrentPodStarts: 1 });
    fake.failNext('runPodSandbox', new OrchError('CRI_ERROR', 'internal', 'no network'));
    const results = await Promise.all([sync(pod()), sync(pod()), sync(pod())]);
    assert.deepEqual(results.map((r) => r.errors.map((e) => e.reason)), [['CreatePodSandboxError'], [], []]);
    const order = fake.calls.map((c) => c.method).filter((m) => m === 'runPodSandbox' || m === 'startContainer');
    // Unbounded, the three sandboxes would come first. A failed sandbox gives its slot back.
    assert.deepEqual(order, ['runPodSandbox', 'runPodSandbox', 'startContainer', 'runPodSandbox', 'startContainer']);
    // So does a sync that ends because the runtime is unreachable: the next pod still starts.
    fake.failNext('runPodSandbox', new OrchError('CRI_UNAVAILABLE', 'unavailable', 'connection refused'));
    await assert.rejects(sync(pod()), { code: 'CRI_UNAVAILABLE' });
    assert.deepEqual((await sync(pod())).errors, []);
  });

  void it('gives the start slot back while its first image is being pulled', { timeout: 10_000 }, async () => {
    let pulled = (): void => undefined;
    const pulling = new Promise<void>((resolve) => {
      pulled = resolve;
    });
    const fake = new FakeRuntime();
    fake.registry.set('slow:1', 'sha256:slow');
    const images: ManagerImages = {
      imageStatus: (request) => fake.imageStatus(request),
      pullImage: async (request) => {
        await pulling;
        return fake.pullImage(request);
      },
    };
    const { sync } = env({ maxConcurrentPodStarts: 1, runtime: fake, images });
    fake.images.set(IMAGE, 'sha256:busybox');
    const slow = sync(pod({ containers: [{ name: 'app', image: 'slow:1' }] }));
    assert.deepEqual((await sync(pod())).errors, [], 'the other pod started during the pull');
    pulled();
    assert.deepEqual((await slow).errors, []);
  });

  void it('returns the image back-off as the requeue time', async () => {
    const { sync, clock } = env({ imageBackOff: { initialMs: 500, maxMs: 4000 } });
    const p = pod({ containers: [{ name: 'app', image: 'missing:1' }] });
    const first = await sync(p);
    assert.equal(first.errors[0]?.reason, 'ErrImagePull');
    assert.equal(first.requeueAfterMs, 500);
    clock.set(clock.now() + 100);
    const second = await sync(p);
    assert.deepEqual(withoutStatus(second), { errors: [{ container: 'app', reason: 'ImagePullBackOff', message: 'Back-off pulling image "missing:1"' }], requeueAfterMs: 400 });
  });
});

void describe('killPod, removePod, getPodStatus, listPods', () => {
  void it('kills with the override, the pod grace period, or the orphan annotation; then stops the sandbox', async () => {
    const { fake, sync, manager } = env();
    const p = pod({ containers: [{ name: 'a', image: IMAGE }, { name: 'b', image: IMAGE }] });
    await sync(p);
    const uid = p.metadata.uid;
    const [pod1] = await manager.listPods();
    assert.ok(pod1);
    await manager.killPod(pod1, { pod: p, gracePeriodSeconds: 1 });
    assert.deepEqual((fake.callsOf('stopContainer') as StopContainerRequest[]).map((s) => s.timeout), [1, 1]);
    assert.equal(fake.callsOf('stopPodSandbox').length, 1);
    const q = pod();
    await sync(q);
    const runningQ = (await manager.listPods()).find((x) => x.uid !== uid);
    assert.ok(runningQ);
    await manager.killPod(runningQ);
    assert.equal((fake.callsOf('stopContainer') as StopContainerRequest[]).at(-1)?.timeout, 7, 'an orphan: the annotated grace period');
    await manager.killPod(runningQ, { pod: q });
  });

  void it('removePod removes the containers, sandboxes and log directory of that UID only', async () => {
    const { fake, sync, manager, logs } = env();
    const p = pod();
    const other = pod();
    await sync(p);
    await sync(other);
    await fake.runPodSandbox({ config: { metadata: { name: 'foreign', namespace: 'x', uid: 'f', attempt: 0 }, labels: { foo: 'bar' } } });
    await manager.removePod(p.metadata.uid);
    const left = [...fake.sandboxes.values()].map((s) => s.config.metadata.name);
    assert.deepEqual(left.sort(), ['foreign', 'web']);
    assert.deepEqual(await readdir(logs), [`shop_web_${other.metadata.uid}`]);
    assert.deepEqual((await manager.listPods()).map((x) => x.uid), [other.metadata.uid], 'unlabelled objects are not listed');
    await manager.removePod(p.metadata.uid);
    await assert.rejects(manager.removePod(''), { code: 'KUBERUNTIME_REMOVE_FAILED' });
    // A pod whose sandboxes are gone already (an earlier pass removed them): its log directory is found by the scan.
    await mkdir(path.join(logs, 'shop_gone_u-gone'));
    await manager.removePod('u-gone');
    assert.deepEqual(await readdir(logs), [`shop_web_${other.metadata.uid}`]);
  });

  void it('getPodStatus reads sandboxes and containers newest first, with restart count, hash, init flag and IPs', async () => {
    const { fake, sync, manager, clock } = env();
    const p = pod({ initContainers: [{ name: 'i', image: IMAGE }] });
    const uid = p.metadata.uid;
    assert.deepEqual(await manager.getPodStatus(uid, 'web', 'shop'), { uid, name: 'web', namespace: 'shop', ips: [], sandboxes: [], containers: [], timestamp: clock.now() });
    await sync(p);
    clock.set(clock.now() + 10);
    fake.exit(running(fake, 'i'), 0);
    await sync(p);
    const s = await manager.getPodStatus(uid, 'web', 'shop');
    assert.deepEqual(s.ips, ['10.88.0.2']);
    assert.deepEqual(s.sandboxes.map((x) => [x.state, x.attempt, x.hostNetwork]), [['ready', 0, false]]);
    assert.deepEqual(s.containers.map((c) => [c.name, c.state, c.init, c.restartCount, c.image]), [['app', 'running', false, 0, IMAGE], ['i', 'exited', true, 0, IMAGE]]);
    assert.match(s.containers[0]?.hash ?? '', /^[0-9a-f]{8}$/);
    assert.equal(s.containers[1]?.reason, 'Completed');
    assert.ok(s.containers[1].finishedAt >= s.containers[1].startedAt);
  });

  void it('reads the termination message the container wrote', async () => {
    const { fake, sync, manager } = env();
    const c: Container = { name: 'app', image: IMAGE };
    const p = pod({ containers: [c] });
    await sync(p);
    const id = running(fake, 'app');
    const mount = fake.containers.get(id)?.config.mounts?.find((m) => m.containerPath === '/dev/termination-log');
    assert.ok(mount);
    await writeFile(mount.hostPath, 'goodbye');
    fake.exit(id, 2);
    const s = await manager.getPodStatus(p.metadata.uid, 'web', 'shop');
    assert.equal(s.containers[0]?.message, 'goodbye');
  });
});

void describe('runtime manager: a pod killed while its containers start', () => {
  void it('starts no further container once the sync is aborted', async () => {
    const e = env();
    const containers = Array.from({ length: 300 }, (_, i) => ({ name: `c${i}`, image: IMAGE }));
    const abort = new AbortController();
    const create = e.fake.createContainer.bind(e.fake);
    e.fake.createContainer = async (req) => {
      const id = await create(req);
      if (created(e.fake).length === 5) abort.abort();
      return id;
    };
    const p = pod({ containers });
    await e.manager.syncPod(p, await e.manager.getPodStatus(p.metadata.uid, p.metadata.name, p.metadata.namespace), abort.signal);
    assert.equal(created(e.fake).length, 5);
  });
});
