/**
 * The CRI behaviour suite (node:test): what the agent relies on from a container runtime,
 * stated once and run against every runtime the agent's tests use, the FakeRuntime in the unit
 * lane (memory-runtime.test.ts) and a real containerd in the integration lane
 * (test/integration/cri-behaviour.test.ts). Where the two disagree, containerd is right and the
 * fake is fixed. Each case gets a fresh harness (behaviour-support.ts); sandboxes are here,
 * containers, exec and images in behaviour-containers.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeContainerBehaviour, describeExecAndImageBehaviour } from './behaviour-containers.js';
import { ids, rejectsNotFound, rejectsOther, withCase, type CriFactory } from './behaviour-support.js';
import { int64 } from './types-common.js';

export { EXEC_CASES, type CriFactory, type CriHarness, type CriUnderTest, type SandboxRequest } from './behaviour-support.js';

function describeSandboxBehaviour(make: CriFactory): void {
  void it('runs a sandbox: READY, with its metadata, labels, annotations, creation time and IP (none on the host network)', () =>
    withCase(make, async (c) => {
      const before = BigInt(Date.now() - 60_000) * 1_000_000n;
      const host = await c.sandbox('host', 'NODE');
      const own = await c.sandbox('own', 'POD');
      for (const s of [host, own]) {
        const status = await c.sandboxStatus(s.id);
        const { id, state, metadata, labels, annotations } = status;
        assert.deepEqual(
          { id, state, metadata, labels, annotations },
          { id: s.id, state: 'SANDBOX_READY', metadata: s.config.metadata, labels: s.config.labels, annotations: s.config.annotations },
        );
        assert.ok(int64(status.createdAt) > before, `createdAt ${status.createdAt} is nanoseconds since the epoch`);
      }
      assert.equal((await c.sandboxStatus(host.id)).network?.ip, '');
      assert.match((await c.sandboxStatus(own.id)).network?.ip ?? '', /^\d+\.\d+\.\d+\.\d+$/);
      assert.ok(int64((await c.sandboxStatus(own.id)).createdAt) >= int64((await c.sandboxStatus(host.id)).createdAt));
    }));

  void it('stops a sandbox (twice): NOTREADY, without its IP, and its running containers exited', () =>
    withCase(make, async (c) => {
      const s = await c.sandbox('stopped', 'POD');
      const running = await c.running(s, 'main');
      const late = await c.container(s, 'late');
      await c.cri.stopPodSandbox(s.id);
      await c.cri.stopPodSandbox(s.id);
      const status = await c.sandboxStatus(s.id);
      assert.equal(status.state, 'SANDBOX_NOTREADY');
      assert.equal(status.network?.ip ?? '', '', 'a stopped sandbox has no network');
      const main = await c.containerStatus(running);
      assert.deepEqual([main.state, main.exitCode, main.reason], ['CONTAINER_EXITED', 137, 'Error']);
      assert.ok(int64(main.finishedAt) >= int64(main.startedAt));
      assert.equal((await c.containerStatus(late)).state, 'CONTAINER_CREATED', 'a container not started stays created');
      await rejectsOther(c.cri.startContainer(late), 'StartContainer in a stopped sandbox');
      const failed = await c.containerStatus(late);
      assert.deepEqual([failed.state, failed.exitCode, failed.reason], ['CONTAINER_EXITED', 128, 'StartError']);
    }));

  void it('removes a sandbox (twice) with its containers; its status is then not found', () =>
    withCase(make, async (c) => {
      const s = await c.sandbox('removed');
      const created = await c.container(s, 'created');
      const running = await c.running(s, 'running');
      await c.cri.stopPodSandbox(s.id);
      await c.cri.removePodSandbox(s.id);
      await c.cri.removePodSandbox(s.id);
      await rejectsNotFound(c.cri.podSandboxStatus({ podSandboxId: s.id }), 'the status of a removed sandbox');
      await rejectsNotFound(c.cri.containerStatus({ containerId: created }), 'the status of a container of a removed sandbox');
      await rejectsNotFound(c.cri.containerStatus({ containerId: running }), 'the status of a container of a removed sandbox');
      assert.deepEqual(await c.cri.listPodSandbox({ labelSelector: c.label }), []);
      assert.deepEqual(await c.cri.listContainers({ labelSelector: c.label }), []);
    }));

  void it('removes a sandbox that is still ready, and its running container', () =>
    withCase(make, async (c) => {
      const s = await c.sandbox('ready');
      const running = await c.running(s, 'main');
      await c.cri.removePodSandbox(s.id);
      await rejectsNotFound(c.cri.podSandboxStatus({ podSandboxId: s.id }), 'the status of a removed sandbox');
      await rejectsNotFound(c.cri.containerStatus({ containerId: running }), 'the status of a container of a removed sandbox');
    }));

  void it('lists sandboxes by id, state and label selector, every set field matching', () =>
    withCase(make, async (c) => {
      const a = await c.sandbox('a', 'NODE', { tier: 'front' });
      const b = await c.sandbox('b', 'NODE', { tier: 'back' });
      const d = await c.sandbox('d', 'NODE', { tier: 'front' });
      await c.cri.stopPodSandbox(d.id);
      const mine = await c.cri.listPodSandbox({ labelSelector: c.label });
      assert.deepEqual(ids(mine), ids([a, b, d]));
      const listed = mine.find((s) => s.id === a.id);
      assert.deepEqual(
        { metadata: listed?.metadata, state: listed?.state, labels: listed?.labels, annotations: listed?.annotations },
        { metadata: a.config.metadata, state: 'SANDBOX_READY', labels: a.config.labels, annotations: a.config.annotations },
      );
      assert.equal(listed?.createdAt, (await c.sandboxStatus(a.id)).createdAt);
      assert.deepEqual(ids(await c.cri.listPodSandbox({ id: b.id })), [b.id]);
      assert.deepEqual(ids(await c.cri.listPodSandbox({ labelSelector: { ...c.label, tier: 'front' } })), ids([a, d]));
      assert.deepEqual(ids(await c.cri.listPodSandbox({ labelSelector: c.label, state: { state: 'SANDBOX_READY' } })), ids([a, b]));
      assert.deepEqual(ids(await c.cri.listPodSandbox({ labelSelector: c.label, state: { state: 'SANDBOX_NOTREADY' } })), [d.id]);
      assert.deepEqual(ids(await c.cri.listPodSandbox({ id: d.id, state: { state: 'SANDBOX_READY' } })), []);
      assert.deepEqual(ids(await c.cri.listPodSandbox({ id: a.id, labelSelector: { tier: 'back' } })), []);
      assert.deepEqual(await c.cri.listPodSandbox({ labelSelector: { [Object.keys(c.label)[0] ?? '']: 'nobody' } }), []);
    }));
}

function describeNotFoundBehaviour(make: CriFactory): void {
  void it('answers calls on unknown sandboxes and containers with CRI_NOT_FOUND', () =>
    withCase(make, async (c) => {
      const s = await c.sandbox('known');
      const unknown = 'f'.repeat(64);
      await rejectsNotFound(c.cri.podSandboxStatus({ podSandboxId: unknown }), 'PodSandboxStatus');
      await rejectsNotFound(c.cri.stopPodSandbox(unknown), 'StopPodSandbox');
      await rejectsNotFound(c.cri.containerStatus({ containerId: unknown }), 'ContainerStatus');
      await rejectsNotFound(c.cri.startContainer(unknown), 'StartContainer');
      await rejectsNotFound(c.cri.stopContainer({ containerId: unknown, timeout: 0 }), 'StopContainer');
      await rejectsNotFound(c.cri.execSync({ containerId: unknown, cmd: ['true'] }), 'ExecSync');
      await rejectsNotFound(
        c.cri.createContainer({ podSandboxId: unknown, sandboxConfig: s.config, config: c.containerConfig(s.config, 'orphan') }),
        'CreateContainer in an unknown sandbox',
      );
      await c.cri.removeContainer(unknown);
      await c.cri.removePodSandbox(unknown);
      assert.deepEqual(await c.cri.listPodSandbox({ id: unknown }), []);
      assert.deepEqual(await c.cri.listContainers({ id: unknown }), []);
    }));
}

/** Runs the suite against the runtime `make` makes, under the name `name`. */
export function runCriBehaviour(name: string, make: CriFactory): void {
  void describe(`CRI behaviour: ${name}`, () => {
    void describe('sandboxes', () => {
      describeSandboxBehaviour(make);
    });
    void describe('containers', () => {
      describeContainerBehaviour(make);
    });
    void describe('exec and images', () => {
      describeExecAndImageBehaviour(make);
    });
    void describe('unknown ids', () => {
      describeNotFoundBehaviour(make);
    });
  });
}
