import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Container, Pod, PodSpec } from 'kubernetes-types/core/v1.js';
import { computePodActions, nextInitContainer, podSandboxChanged, shouldContainerBeRestarted, type PodActions } from './compute-actions.js';
import { hashContainer, hashContainerWithoutResources } from './hash.js';
import type { RuntimeContainerState, RuntimeContainerStatus, RuntimePodStatus, RuntimeSandboxStatus } from './types.js';

const app: Container = { name: 'app', image: 'busybox:1.35' };
const side: Container = { name: 'side', image: 'busybox:1.35' };
const init1: Container = { name: 'init1', image: 'busybox:1.35' };
const init2: Container = { name: 'init2', image: 'busybox:1.35' };

function pod(spec: Partial<PodSpec> = {}): Pod {
  return { metadata: { name: 'p', namespace: 'n', uid: 'u1' }, spec: { containers: [app, side], ...spec } };
}

let seq = 0;
function sandbox(state: 'ready' | 'notready' = 'ready', extra: Partial<RuntimeSandboxStatus> = {}): RuntimeSandboxStatus {
  seq++;
  return { id: `sb${seq}`, state, createdAt: seq, attempt: 0, ips: ['10.88.0.2'], hostNetwork: false, ...extra };
}

function ctr(spec: Container, state: RuntimeContainerState, extra: Partial<RuntimeContainerStatus> = {}): RuntimeContainerStatus {
  seq++;
  return {
    id: `c${seq}`, name: spec.name, state, createdAt: seq, startedAt: seq, finishedAt: state === 'exited' ? seq + 1 : 0, exitCode: 0,
    reason: '', message: '', image: spec.image ?? '', imageRef: 'sha256:x', restartCount: 0, hash: hashContainer(spec), init: false, ...extra,
  };
}

/** Newest first, as getPodStatus returns them: pass oldest first here. */
function status(sandboxes: RuntimeSandboxStatus[], containers: RuntimeContainerStatus[] = []): RuntimePodStatus {
  const ready = sandboxes.at(-1);
  return {
    uid: 'u1', name: 'p', namespace: 'n', ips: ready?.state === 'ready' ? ready.ips : [],
    sandboxes: [...sandboxes].reverse(), containers: [...containers].reverse(), timestamp: 0,
  };
}

function summary(a: PodActions): Record<string, unknown> {
  return {
    killPod: a.killPod, createSandbox: a.createSandbox, attempt: a.attempt, purge: a.purgeInitContainers,
    init: a.initContainersToStart[0]?.name, start: a.containersToStart.map((c) => c.name), kill: a.containersToKill.map((k) => k.name),
  };
}

const none = { killPod: false, createSandbox: false, purge: false, init: undefined, start: [], kill: [] };

void describe('podSandboxChanged', () => {
  void it('needs a sandbox when there is none, attempt 0', () => {
    assert.deepEqual(podSandboxChanged(pod(), status([])), { changed: true, attempt: 0, sandboxId: '' });
  });
  void it('keeps a single ready sandbox with an IP', () => {
    const sb = sandbox('ready', { attempt: 2 });
    assert.deepEqual(podSandboxChanged(pod(), status([sb])), { changed: false, attempt: 2, sandboxId: sb.id });
  });
  void it('recreates (attempt + 1) when the newest is not ready, two are ready, the network mode changed, or a pod-network sandbox has no IP', () => {
    assert.equal(podSandboxChanged(pod(), status([sandbox('ready'), sandbox('notready', { attempt: 3 })])).attempt, 4);
    assert.ok(podSandboxChanged(pod(), status([sandbox('ready'), sandbox('ready')])).changed);
    assert.ok(podSandboxChanged(pod({ hostNetwork: true }), status([sandbox('ready')])).changed);
    assert.ok(podSandboxChanged(pod(), status([sandbox('ready', { hostNetwork: true, ips: [] })])).changed);
    assert.ok(podSandboxChanged(pod(), status([sandbox('ready', { ips: [] })])).changed);
    assert.ok(!podSandboxChanged(pod({ hostNetwork: true }), status([sandbox('ready', { hostNetwork: true, ips: [] })])).changed);
  });
});

void describe('shouldContainerBeRestarted', () => {
  void it('follows the restart policy for exited containers', () => {
    const ok = status([sandbox()], [ctr(app, 'exited', { exitCode: 0 })]);
    const failed = status([sandbox()], [ctr(app, 'exited', { exitCode: 1 })]);
    assert.equal(shouldContainerBeRestarted(pod(), app, ok), true);
    assert.equal(shouldContainerBeRestarted(pod({ restartPolicy: 'OnFailure' }), app, ok), false);
    assert.equal(shouldContainerBeRestarted(pod({ restartPolicy: 'OnFailure' }), app, failed), true);
    assert.equal(shouldContainerBeRestarted(pod({ restartPolicy: 'Never' }), app, failed), false);
  });
  void it('always starts missing, created and unknown containers; never running ones; none of a deleted pod', () => {
    assert.equal(shouldContainerBeRestarted(pod({ restartPolicy: 'Never' }), app, status([sandbox()])), true);
    assert.equal(shouldContainerBeRestarted(pod({ restartPolicy: 'Never' }), app, status([sandbox()], [ctr(app, 'created')])), true);
    assert.equal(shouldContainerBeRestarted(pod({ restartPolicy: 'Never' }), app, status([sandbox()], [ctr(app, 'unknown')])), true);
    assert.equal(shouldContainerBeRestarted(pod(), app, status([sandbox()], [ctr(app, 'running')])), false);
    const deleted = { ...pod(), metadata: { name: 'p', uid: 'u1', deletionTimestamp: '2024-01-01T00:00:00Z' } };
    assert.equal(shouldContainerBeRestarted(deleted, app, status([sandbox()])), false);
  });
});

void describe('nextInitContainer', () => {
  const p = pod({ initContainers: [init1, init2] });
  const i = (spec: Container, state: RuntimeContainerState, extra: Partial<RuntimeContainerStatus> = {}) => ctr(spec, state, { init: true, ...extra });
  void it('walks the init containers in order', () => {
    assert.equal(nextInitContainer(p, status([sandbox()])).next?.name, 'init1');
    assert.deepEqual(nextInitContainer(p, status([sandbox()], [i(init1, 'running')])), { done: false });
    assert.equal(nextInitContainer(p, status([sandbox()], [i(init1, 'exited')])).next?.name, 'init2');
    assert.deepEqual(nextInitContainer(p, status([sandbox()], [i(init1, 'exited'), i(init2, 'exited')])), { done: true });
  });
  void it('returns the last failed one to run again', () => {
    const failed = i(init2, 'exited', { exitCode: 3 });
    const r = nextInitContainer(p, status([sandbox()], [i(init1, 'exited'), failed]));
    assert.equal(r.next?.name, 'init2');
    assert.equal(r.failed?.id, failed.id);
    assert.equal(nextInitContainer(p, status([sandbox()], [i(init1, 'unknown')])).failed?.name, 'init1');
  });
  void it('is done when a regular container runs', () => {
    assert.deepEqual(nextInitContainer(p, status([sandbox()], [ctr(app, 'running')])), { done: true });
    assert.deepEqual(nextInitContainer(pod(), status([sandbox()])), { done: true });
  });
});

void describe('computePodActions', () => {
  void it('a new pod: create the sandbox and start every container', () => {
    assert.deepEqual(summary(computePodActions(pod(), status([]))), { ...none, killPod: true, createSandbox: true, attempt: 0, start: ['app', 'side'] });
  });

  void it('a new pod with init containers: create the sandbox, purge init containers, start the first', () => {
    assert.deepEqual(summary(computePodActions(pod({ initContainers: [init1, init2] }), status([]))), {
      ...none, killPod: true, createSandbox: true, attempt: 0, purge: true, init: 'init1',
    });
  });

  void it('nothing to do for a running pod', () => {
    const sb = sandbox();
    const a = computePodActions(pod(), status([sb], [ctr(app, 'running'), ctr(side, 'running')]));
    assert.deepEqual(summary(a), { ...none, attempt: 0 });
    assert.equal(a.sandboxId, sb.id);
  });

  void it('a dead sandbox: kill everything and create it again with the next attempt', () => {
    const a = computePodActions(pod(), status([sandbox('notready', { attempt: 1 })], [ctr(app, 'running'), ctr(side, 'exited')]));
    assert.deepEqual(summary(a), { ...none, killPod: true, createSandbox: true, attempt: 2, start: ['app', 'side'] });
    assert.equal(a.sandboxId, '');
  });

  void it('a dead sandbox of a finished Never pod: only kill it', () => {
    const a = computePodActions(pod({ restartPolicy: 'Never' }), status([sandbox('notready')], [ctr(app, 'exited'), ctr(side, 'exited')]));
    assert.deepEqual(summary(a), { ...none, killPod: true, attempt: 1 });
  });

  void it('a dead sandbox of an OnFailure pod starts only the containers that did not succeed', () => {
    const p = pod({ restartPolicy: 'OnFailure' });
    const a = computePodActions(p, status([sandbox('notready')], [ctr(app, 'exited', { exitCode: 0 }), ctr(side, 'exited', { exitCode: 1 })]));
    assert.deepEqual(a.containersToStart.map((c) => c.name), ['side']);
    const done = computePodActions(p, status([sandbox('notready')], [ctr(app, 'exited'), ctr(side, 'exited')]));
    assert.deepEqual(summary(done), { ...none, killPod: true, attempt: 1 });
  });

  void it('restart policies for exited containers', () => {
    const st = status([sandbox()], [ctr(app, 'exited', { exitCode: 0 }), ctr(side, 'exited', { exitCode: 2 })]);
    assert.deepEqual(computePodActions(pod(), st).containersToStart.map((c) => c.name), ['app', 'side']);
    assert.deepEqual(computePodActions(pod({ restartPolicy: 'OnFailure' }), st).containersToStart.map((c) => c.name), ['side']);
    assert.deepEqual(summary(computePodActions(pod({ restartPolicy: 'Never' }), st)), { ...none, killPod: true, attempt: 0 }, 'nothing left: stop the sandbox');
  });

  void it('one container still running keeps the pod', () => {
    const st = status([sandbox()], [ctr(app, 'exited'), ctr(side, 'running')]);
    assert.deepEqual(summary(computePodActions(pod({ restartPolicy: 'Never' }), st)), { ...none, attempt: 0 });
  });

  void it('a changed spec hash kills and restarts that container only, whatever the restart policy', () => {
    const old = ctr(app, 'running', { hash: 'deadbeef' });
    const a = computePodActions(pod({ restartPolicy: 'Never' }), status([sandbox()], [old, ctr(side, 'running')]));
    assert.deepEqual(summary(a), { ...none, attempt: 0, start: ['app'], kill: ['app'] });
    assert.equal(a.containersToKill[0]?.id, old.id);
    assert.match(a.containersToKill[0].message, /definition changed/);
  });

  void it('unknown containers are killed before they start again', () => {
    const unknown = ctr(app, 'unknown');
    const a = computePodActions(pod(), status([sandbox()], [unknown, ctr(side, 'running')]));
    assert.deepEqual(summary(a), { ...none, attempt: 0, start: ['app'], kill: ['app'] });
  });

  void it('init containers: one at a time, regular containers only after all succeeded', () => {
    const p = pod({ initContainers: [init1, init2] });
    const i = (spec: Container, state: RuntimeContainerState, extra: Partial<RuntimeContainerStatus> = {}) => ctr(spec, state, { init: true, ...extra });
    assert.deepEqual(summary(computePodActions(p, status([sandbox()], [i(init1, 'running')]))), { ...none, attempt: 0 });
    assert.deepEqual(summary(computePodActions(p, status([sandbox()], [i(init1, 'exited')]))), { ...none, attempt: 0, init: 'init2' });
    assert.deepEqual(summary(computePodActions(p, status([sandbox()], [i(init1, 'exited'), i(init2, 'exited')]))), { ...none, attempt: 0, start: ['app', 'side'] });
  });

  void it('a failed init container runs again, or with Never kills the pod', () => {
    const i = (spec: Container, state: RuntimeContainerState, extra: Partial<RuntimeContainerStatus> = {}) => ctr(spec, state, { init: true, ...extra });
    const st = status([sandbox()], [i(init1, 'exited', { exitCode: 1 })]);
    assert.deepEqual(summary(computePodActions(pod({ initContainers: [init1, init2] }), st)), { ...none, attempt: 0, init: 'init1' });
    assert.deepEqual(summary(computePodActions(pod({ initContainers: [init1, init2], restartPolicy: 'Never' }), st)), { ...none, killPod: true, attempt: 0 });
  });

  void it('prunes older exited init container instances, keeping the newest of each', () => {
    const i = (spec: Container, state: RuntimeContainerState, extra: Partial<RuntimeContainerStatus> = {}) => ctr(spec, state, { init: true, ...extra });
    const old1 = i(init1, 'exited', { exitCode: 1 });
    const old2 = i(init1, 'exited', { exitCode: 1 });
    const newest = i(init1, 'exited', { exitCode: 0 });
    const a = computePodActions(pod({ initContainers: [init1, init2] }), status([sandbox()], [old1, old2, newest]));
    assert.deepEqual([...a.initContainersToPrune].sort(), [old1.id, old2.id].sort());
    assert.equal(a.initContainersToStart[0]?.name, 'init2');
  });

  void it('a deleted pod starts nothing and stops once nothing runs', () => {
    const deleted: Pod = { ...pod(), metadata: { name: 'p', uid: 'u1', deletionTimestamp: '2024-01-01T00:00:00Z' } };
    assert.deepEqual(summary(computePodActions(deleted, status([sandbox()], [ctr(app, 'exited'), ctr(side, 'exited')]))), { ...none, killPod: true, attempt: 0 });
  });

  void it('uses the injected hash function', () => {
    const st = status([sandbox()], [ctr(app, 'running', { hash: 'h-app' }), ctr(side, 'running', { hash: 'h-side' })]);
    assert.deepEqual(summary(computePodActions(pod(), st, { hashOf: (c) => `h-${c.name}` })), { ...none, attempt: 0 });
    assert.deepEqual(computePodActions(pod(), st, { hashOf: (c) => (c.name === 'side' ? 'other' : `h-${c.name}`) }).containersToStart.map((c) => c.name), ['side']);
  });
});

void describe('ephemeral containers', () => {
  const debug = { name: 'debugger', image: 'busybox:1.35', targetContainerName: 'app' };

  void it('start once in the running pod, even while init containers run, and never again', () => {
    const sb = sandbox();
    const running = [ctr(app, 'running'), ctr(side, 'running')];
    const added = computePodActions(pod({ ephemeralContainers: [debug] }), status([sb], running));
    assert.deepEqual(added.ephemeralContainersToStart.map((c) => c.name), ['debugger']);
    assert.equal(added.killPod, false);
    const initializing = computePodActions(pod({ initContainers: [init1], ephemeralContainers: [debug] }), status([sb], [ctr(init1, 'running', { init: true })]));
    assert.deepEqual(initializing.ephemeralContainersToStart.map((c) => c.name), ['debugger']);
    const exited = ctr({ name: 'debugger', image: 'busybox:1.35' }, 'exited', { ephemeral: true, exitCode: 1 });
    assert.deepEqual(computePodActions(pod({ ephemeralContainers: [debug] }), status([sb], [...running, exited])).ephemeralContainersToStart, []);
  });

  void it('do not start with a new sandbox, nor keep a finished pod running', () => {
    assert.deepEqual(computePodActions(pod({ ephemeralContainers: [debug] }), status([])).ephemeralContainersToStart, []);
    const done = [ctr(app, 'exited'), ctr(side, 'exited')];
    const finished = computePodActions(pod({ restartPolicy: 'Never', ephemeralContainers: [debug] }), status([sandbox()], [...done, ctr({ name: 'debugger' }, 'running', { ephemeral: true })]));
    assert.equal(finished.killPod, true);
  });
});

void describe('computePodActions with in-place resize', () => {
  const before = { requests: { cpu: '100m' }, limits: { cpu: '200m', memory: '64Mi' } };
  const sized = (resources: Container['resources'], resizePolicy: Container['resizePolicy'] = []): Container => ({ ...app, ...(resources === undefined ? {} : { resources }), resizePolicy });
  const old = sized(before);
  const instance = (): RuntimeContainerStatus => ctr(old, 'running', { hashWithoutResources: hashContainerWithoutResources(old) });

  void it('updates a running container whose spec changed only in its resources, where its resizePolicy allows', () => {
    const c = instance();
    const grown = sized({ ...before, limits: { cpu: '300m', memory: '64Mi' } });
    const resize = { current: (id: string) => (id === c.id ? before : undefined) };
    const a = computePodActions(pod({ containers: [grown] }), status([sandbox()], [c]), { inPlaceResize: resize });
    assert.deepEqual(a.containersToUpdate.map((x) => x.name), ['app']);
    assert.deepEqual(summary(a).kill, []);
    assert.equal(a.killPod, false);
    const none = computePodActions(pod({ containers: [old] }), status([sandbox()], [c]), { inPlaceResize: resize });
    assert.deepEqual(none.containersToUpdate, [], 'it already has them');
  });

  void it('restarts it where resizePolicy says RestartContainer, and recreates it without the gate or when more than resources changed', () => {
    const c = instance();
    const resize = { current: () => before };
    const memory = sized({ ...before, limits: { cpu: '200m', memory: '96Mi' } }, [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }]);
    const restart = computePodActions(pod({ containers: [memory] }), status([sandbox()], [c]), { inPlaceResize: resize });
    assert.deepEqual(restart.containersToKill.map((k) => k.message), ['Container app resize requires restart']);
    assert.deepEqual(restart.containersToStart.map((x) => x.name), ['app']);
    const grown = sized({ ...before, limits: { cpu: '300m', memory: '64Mi' } });
    const gateOff = computePodActions(pod({ containers: [grown] }), status([sandbox()], [c]));
    assert.deepEqual(gateOff.containersToKill.map((k) => k.message), ['Container app definition changed, will be restarted']);
    const newImage = computePodActions(pod({ containers: [{ ...grown, image: 'busybox:1.36' }] }), status([sandbox()], [c]), { inPlaceResize: resize });
    assert.deepEqual(newImage.containersToKill.map((k) => k.message), ['Container app definition changed, will be restarted']);
  });
});
