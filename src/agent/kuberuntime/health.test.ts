import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { LogRoot } from '../logging/index.js';
import type { ContainerProbeResults, PodEvent } from '../prober/index.js';
import type { CreateContainerRequest, StopContainerRequest } from '../runtime/cri/index.js';
import { computePodActions } from './compute-actions.js';
import { FakeRuntime } from '../runtime/cri/testing.js';
import { terminationGracePeriod } from './kill.js';
import { createRuntimeManager } from './manager.js';
import type { RuntimeManagerOptions } from './options.js';
import { seccompProfile } from './seccomp.js';
import { sysctlAdmission } from './sysctls.js';
import type { PodSyncResult, RuntimeContainerStatus, RuntimePodStatus } from './types.js';
import { FakeClock } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';

const lines: string[] = [];
const logger = new LogRoot({ clock: new FakeClock(), format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: (_s, l) => lines.push(l) } }).logger('test');
const IMAGE = 'busybox:1.35';

let root = '';
before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'na-kr-health-'));
});
after(() => rm(root, { recursive: true, force: true }));

let n = 0;
function env(extra: Partial<RuntimeManagerOptions> = {}) {
  const clock = new FakeClock();
  const fake = new FakeRuntime(() => clock.now());
  fake.images.set(IMAGE, 'sha256:busybox');
  const events: PodEvent[] = [];
  const ROUTINE = new Set(['Pulled', 'Pulling', 'Created', 'Started']);
  const failed = new Map<string, 'liveness' | 'startup'>();
  const probes: ContainerProbeResults = { failedProbe: (id) => { const p = failed.get(id); return p === undefined ? undefined : { probe: p }; }, started: () => true };
  const manager = createRuntimeManager({
    clock,
    runtime: fake, images: fake, logger, podLogsRoot: path.join(root, `logs-${++n}`),
    dns: { clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local', resolvConf: '' }, hostIPs: () => ['192.168.0.2'], nodeName: 'node-1',
    volumes: { mountsFor: () => Promise.resolve([]) }, cgroupParent: () => Promise.resolve('/test'),
    // Routine start events (Pulled, Created, Started) are tested in images/start tests; kept out here.
    probeResults: probes, onEvent: (e) => { if (!ROUTINE.has(e.reason)) events.push(e); }, canLowerOomScore: () => false, ...extra,
  });
  const sync = async (pod: NodePod): Promise<PodSyncResult> => manager.syncPod(pod, await manager.getPodStatus(pod.metadata.uid, pod.metadata.name, 'shop'));
  const running = (name: string): string => {
    const c = [...fake.containers.values()].find((x) => x.config.metadata.name === name && x.state === 'CONTAINER_RUNNING');
    assert.ok(c, `${name} running`);
    return c.id;
  };
  const created = () => (fake.callsOf('createContainer') as CreateContainerRequest[]).map((c) => c.config.metadata.name);
  const stops = () => fake.callsOf('stopContainer') as StopContainerRequest[];
  return { fake, manager, clock, sync, events, failed, running, created, stops };
}

function pod(spec: Partial<NonNullable<Pod['spec']>> = {}): NodePod {
  return { metadata: { name: 'web', namespace: 'shop', uid: `u-${++n}` }, spec: { containers: [{ name: 'app', image: IMAGE }], terminationGracePeriodSeconds: 30, ...spec } };
}

void describe('liveness and startup failures in the runtime manager', () => {
  void it('kills the instance with the probe grace period and starts it again; Never only kills', async () => {
    const e = env();
    const p = pod({ containers: [{ name: 'app', image: IMAGE, livenessProbe: { exec: { command: ['true'] }, terminationGracePeriodSeconds: 5 } }] });
    await e.sync(p);
    e.failed.set(e.running('app'), 'liveness');
    assert.deepEqual(await e.sync(p), { errors: [] });
    assert.deepEqual(e.stops().map((s) => s.timeout), [5]);
    assert.deepEqual(e.created(), ['app', 'app']);
    assert.deepEqual(e.events.map((x) => `${x.reason}: ${x.message}`), ['Killing: Container app failed liveness probe, will be restarted']);

    const never = env();
    const q = pod({ restartPolicy: 'Never', containers: [{ name: 'app', image: IMAGE }, { name: 'other', image: IMAGE }] });
    await never.sync(q);
    never.failed.set(never.running('app'), 'startup');
    await never.sync(q);
    assert.deepEqual(never.created(), ['app', 'other'], 'not restarted');
    assert.deepEqual(never.events.map((x) => x.message), ['Container app failed startup probe']);
    assert.deepEqual(never.stops().map((s) => s.timeout), [30], 'no probe grace period: the pod\'s');
  });

  void it('the grace period rules: deletion grace, probe grace, pod grace, orphan annotation', () => {
    const p = pod({ containers: [{ name: 'app', livenessProbe: { terminationGracePeriodSeconds: 3 } }] });
    const spec = p.spec?.containers[0];
    assert.equal(terminationGracePeriod({ pod: p, spec, probe: 'liveness' }), 3);
    assert.equal(terminationGracePeriod({ pod: p, spec, probe: 'startup' }), 30);
    assert.equal(terminationGracePeriod({ pod: { ...p, metadata: { ...p.metadata, deletionGracePeriodSeconds: 1 } }, spec, probe: 'liveness' }), 1);
    assert.equal(terminationGracePeriod({ annotatedGrace: 9 }), 9);
  });
});

void describe('lifecycle hooks in the runtime manager', () => {
  void it('a failing postStart exec kills the container and reports PostStartHookError', async () => {
    const e = env();
    e.fake.execResults.set('hook', { exitCode: 1, stderr: 'bad' });
    const p = pod({ containers: [{ name: 'app', image: IMAGE, lifecycle: { postStart: { exec: { command: ['hook'] } } } }] });
    const r = await e.sync(p);
    assert.deepEqual(r.errors.map((x) => x.reason), ['PostStartHookError']);
    assert.match(r.errors[0]?.message ?? '', /^Exec lifecycle hook \(\[hook\]\) for Container "app" in Pod "web_shop\(u-\d+\)" failed - error: command 'hook' exited with 1: bad, message: "bad"$/);
    assert.deepEqual(e.events.map((x) => x.reason), ['FailedPostStartHook', 'Killing']);
    assert.equal(e.events[1]?.message, 'FailedPostStartHook');
    assert.equal(e.stops().length, 1);
  });

  void it('preStop runs before StopContainer; a failing one is an event and the stop goes on', async () => {
    const e = env();
    e.fake.execResults.set('drain', { exitCode: 2 });
    const p = pod({ containers: [{ name: 'app', image: IMAGE, lifecycle: { preStop: { exec: { command: ['drain'] } } } }] });
    await e.sync(p);
    const [running] = await e.manager.listPods();
    assert.ok(running);
    await e.manager.killPod(running, { pod: p });
    const methods = e.fake.calls.map((c) => c.method).filter((m) => m === 'execSync' || m === 'stopContainer');
    assert.deepEqual(methods, ['execSync', 'stopContainer']);
    assert.deepEqual(e.events.map((x) => `${x.reason}: ${x.message}`), ['Killing: Stopping container app', 'FailedPreStopHook: PreStopHook failed']);
    assert.equal(e.stops()[0]?.timeout, 30);
  });

  void it('takes the time a preStop hook took from the grace period StopContainer gets, and cuts it at the grace period', async () => {
    const e = env();
    const p = pod({ containers: [{ name: 'app', image: IMAGE, lifecycle: { preStop: { sleep: { seconds: 5 } } } }] });
    await e.sync(p);
    const [running] = await e.manager.listPods();
    assert.ok(running);
    const killing = e.manager.killPod(running, { pod: p });
    await e.clock.advance(4999);
    assert.equal(e.stops().length, 0, 'the hook is still sleeping');
    await e.clock.advance(1);
    await killing;
    assert.equal(e.stops()[0]?.timeout, 25);

    const long = pod({ terminationGracePeriodSeconds: 3, containers: [{ name: 'app', image: IMAGE, lifecycle: { preStop: { sleep: { seconds: 60 } } } }] });
    await e.sync(long);
    const held = (await e.manager.listPods()).find((r) => r.uid === long.metadata.uid);
    assert.ok(held);
    const cut = e.manager.killPod(held, { pod: long });
    await e.clock.advance(3000);
    await cut;
    assert.equal(e.stops()[1]?.timeout, 2, 'the hook used the whole grace period: StopContainer gets the minimum');
  });

  void it('with the sidecar gate, sidecars stop after the regular containers', async () => {
    const e = env({ sidecarContainers: true });
    const p = pod({ initContainers: [{ name: 'proxy', image: IMAGE, restartPolicy: 'Always' }] });
    await e.sync(p);
    assert.deepEqual(e.created(), ['proxy'], 'a new sandbox: the first init container only');
    await e.sync(p);
    assert.deepEqual(e.created(), ['proxy', 'app'], 'the sidecar runs: init is done');
    const [running] = await e.manager.listPods();
    assert.ok(running);
    await e.manager.killPod(running, { pod: p });
    const byId = new Map([...e.fake.containers.values()].map((c) => [c.id, c.config.metadata.name]));
    assert.deepEqual(e.stops().map((s) => byId.get(s.containerId)), ['app', 'proxy']);
  });

  void it('warns once when OOM score adjustments cannot be lowered', async () => {
    const e = env();
    const guaranteed = { limits: { cpu: '1', memory: '1Gi' } };
    lines.length = 0;
    await e.sync(pod({ containers: [{ name: 'a', image: IMAGE, resources: guaranteed }, { name: 'b', image: IMAGE, resources: guaranteed }] }));
    assert.equal(lines.filter((l) => l.includes('OOM score adjustments below 0 cannot be applied')).length, 1);
  });
});

void describe('sidecar init actions', () => {
  const status = (containers: Partial<RuntimeContainerStatus>[]): RuntimePodStatus => ({
    uid: 'u', name: 'p', namespace: 'n', ips: ['10.0.0.1'], timestamp: 0,
    sandboxes: [{ id: 's', state: 'ready', createdAt: 1, attempt: 0, ips: ['10.0.0.1'], hostNetwork: false }],
    containers: containers.map((c, i) => ({
      id: `c${i}`, name: '', state: 'running', createdAt: 1, startedAt: 1, finishedAt: 0, exitCode: 0, reason: '', message: '',
      image: IMAGE, imageRef: '', restartCount: 0, hash: '', init: true, ...c,
    })),
  });
  const p = pod({ initContainers: [{ name: 'proxy', image: IMAGE, restartPolicy: 'Always' }, { name: 'setup', image: IMAGE }] });
  const actions = (s: RuntimePodStatus, started = true) =>
    computePodActions(p, s, { sidecarContainers: true, hashOf: () => '', probes: { failedProbe: () => undefined, started: () => started } });

  void it('waits for a sidecar\'s startup probe, then runs the next init container', () => {
    assert.deepEqual(actions(status([{ name: 'proxy' }]), false).initContainersToStart, []);
    assert.deepEqual(actions(status([{ name: 'proxy' }])).initContainersToStart.map((c) => c.name), ['setup']);
  });
  void it('restarts an exited sidecar whatever the restart policy, without running init containers again', () => {
    const a = actions(status([{ name: 'app', init: false }, { name: 'proxy', state: 'exited', exitCode: 0 }, { name: 'setup', state: 'exited' }]));
    assert.deepEqual([a.initContainersToStart.map((c) => c.name), a.initDone, a.killPod], [['proxy'], true, false]);
  });
});

void describe('seccomp profiles and sysctl admission', () => {
  const settings = { runtimeDefault: false, profileRoot: '/var/lib/na/seccomp' };
  void it('container over pod over seccompDefault; Localhost under the profile root', () => {
    const p = pod({ securityContext: { seccompProfile: { type: 'RuntimeDefault' } } });
    assert.deepEqual(seccompProfile(p, undefined, settings), { profileType: 'RuntimeDefault' });
    assert.deepEqual(seccompProfile(p, { type: 'Localhost', localhostProfile: 'a/b.json' }, settings), { profileType: 'Localhost', localhostRef: '/var/lib/na/seccomp/a/b.json' });
    assert.deepEqual(seccompProfile(pod(), undefined, settings), { profileType: 'Unconfined' });
    assert.deepEqual(seccompProfile(pod(), undefined, { ...settings, runtimeDefault: true }), { profileType: 'RuntimeDefault' });
    assert.throws(() => seccompProfile(pod(), { type: 'Localhost' }, settings), { code: 'KUBERUNTIME_SANDBOX_CONFIG_INVALID' });
  });
  void it('admits safe sysctls and allowed patterns; refuses others and host-namespace conflicts', () => {
    const with_ = (names: string[], extra: Partial<NonNullable<Pod['spec']>> = {}) => pod({ ...extra, securityContext: { sysctls: names.map((name) => ({ name, value: '1' })) } });
    assert.deepEqual(sysctlAdmission(with_(['kernel.shm_rmid_forced', 'net.ipv4.tcp_syncookies', 'net/ipv4/ping_group_range']), []), { admit: true });
    assert.deepEqual(sysctlAdmission(with_(['kernel.msgmax']), ['kernel.msg*']), { admit: true });
    assert.deepEqual(sysctlAdmission(with_(['kernel.msgmax']), []), { admit: false, reason: 'SysctlForbidden', message: 'forbidden sysctl: "kernel.msgmax" not allowlisted' });
    assert.deepEqual(sysctlAdmission(with_(['kernel.shm_rmid_forced'], { hostIPC: true }), []).message, 'forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host ipc enabled');
    assert.deepEqual(sysctlAdmission(with_(['vm.swappiness']), ['vm.*']).admit, false, 'not namespaced: never allowed');
    assert.deepEqual(sysctlAdmission(pod(), []), { admit: true });
  });
});
