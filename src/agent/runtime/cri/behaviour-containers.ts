/**
 * The CRI behaviour suite's containers, exec and images (see behaviour.ts).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { EXEC_CASES, ids, rejectsNotFound, rejectsOther, text, withCase, type CriFactory } from './behaviour-support.js';
import { int64 } from './types-common.js';

export function describeContainerBehaviour(make: CriFactory): void {
  void it('creates a container in a sandbox: CREATED, not started, with its metadata, labels, annotations and log path', () =>
    withCase(make, async (c) => {
      const s = await c.sandbox('pod');
      const id = await c.container(s, 'main');
      const status = await c.containerStatus(id);
      const config = c.containerConfig(s.config, 'main');
      assert.deepEqual(
        { id: status.id, state: status.state, metadata: status.metadata, labels: status.labels, annotations: status.annotations },
        { id, state: 'CONTAINER_CREATED', metadata: config.metadata, labels: config.labels, annotations: config.annotations },
      );
      assert.ok(int64(status.createdAt) >= int64((await c.sandboxStatus(s.id)).createdAt), 'created after its sandbox');
      assert.deepEqual([status.startedAt, status.finishedAt, status.exitCode], ['0', '0', 0]);
      assert.equal(status.logPath, `${s.config.logDirectory ?? ''}/main/0.log`);
      const quiet = await c.cri.createContainer({ podSandboxId: s.id, sandboxConfig: s.config, config: { ...c.containerConfig(s.config, 'quiet'), logPath: '' } });
      assert.equal((await c.containerStatus(quiet)).logPath, '', 'no log path: none');
      const [listed] = await c.cri.listContainers({ id });
      assert.deepEqual(
        { podSandboxId: listed?.podSandboxId, state: listed?.state, createdAt: listed?.createdAt, labels: listed?.labels },
        { podSandboxId: s.id, state: 'CONTAINER_CREATED', createdAt: status.createdAt, labels: config.labels },
      );
      const image = (await c.cri.imageStatus({ image: { image: c.harness.image } })).image;
      assert.equal(listed?.imageRef, image?.id, 'a listed container names its image by ID');
    }));

  void it('starts a container: RUNNING, started after it was created; starting it again is an error', () =>
    withCase(make, async (c) => {
      const s = await c.sandbox('pod');
      const id = await c.running(s, 'main');
      const status = await c.containerStatus(id);
      assert.equal(status.state, 'CONTAINER_RUNNING');
      assert.ok(int64(status.startedAt) >= int64(status.createdAt), `startedAt ${status.startedAt} >= createdAt ${status.createdAt}`);
      assert.equal(status.finishedAt, '0');
      await rejectsOther(c.cri.startContainer(id), 'StartContainer of a running container');
      assert.equal((await c.containerStatus(id)).state, 'CONTAINER_RUNNING');
    }));

  void it('reports the exit code and reason of a container that exited: Completed for 0, Error otherwise', () =>
    withCase(make, async (c) => {
      const s = await c.sandbox('pod');
      const failed = await c.running(s, 'failed');
      const done = await c.running(s, 'done');
      await c.harness.exit(failed, 3);
      await c.harness.exit(done, 0);
      const f = await c.containerStatus(failed);
      assert.deepEqual([f.state, f.exitCode, f.reason], ['CONTAINER_EXITED', 3, 'Error']);
      assert.ok(int64(f.finishedAt) >= int64(f.startedAt) && int64(f.startedAt) >= int64(f.createdAt), 'created <= started <= finished');
      const d = await c.containerStatus(done);
      assert.deepEqual([d.state, d.exitCode, d.reason], ['CONTAINER_EXITED', 0, 'Completed']);
      await rejectsOther(c.cri.startContainer(failed), 'StartContainer of an exited container');
    }));

  void it('stops a running container with a timeout (twice): killed (137) after the grace period; a created one stays created', () =>
    withCase(make, async (c) => {
      const s = await c.sandbox('pod');
      const id = await c.running(s, 'main');
      const created = await c.container(s, 'idle');
      await c.cri.stopContainer({ containerId: id, timeout: 1 });
      await c.cri.stopContainer({ containerId: id, timeout: 1 });
      const status = await c.containerStatus(id);
      assert.deepEqual([status.state, status.exitCode, status.reason], ['CONTAINER_EXITED', 137, 'Error']);
      assert.ok(int64(status.finishedAt) >= int64(status.startedAt));
      await c.cri.stopContainer({ containerId: created, timeout: 0 });
      assert.equal((await c.containerStatus(created)).state, 'CONTAINER_CREATED');
    }));

  void it('removes a container (twice), running or not: then not found and not listed', () =>
    withCase(make, async (c) => {
      const s = await c.sandbox('pod');
      const running = await c.running(s, 'running');
      const created = await c.container(s, 'created');
      const kept = await c.container(s, 'kept');
      for (const id of [running, created]) {
        await c.cri.removeContainer(id);
        await c.cri.removeContainer(id);
        await rejectsNotFound(c.cri.containerStatus({ containerId: id }), 'the status of a removed container');
      }
      assert.deepEqual(ids(await c.cri.listContainers({ podSandboxId: s.id })), [kept]);
      assert.equal((await c.sandboxStatus(s.id)).state, 'SANDBOX_READY', 'its sandbox is untouched');
    }));

  void it('lists containers by id, sandbox, state and label selector, every set field matching', () =>
    withCase(make, async (c) => {
      const s1 = await c.sandbox('one');
      const s2 = await c.sandbox('two');
      const a = await c.running(s1, 'a', { tier: 'front' });
      const b = await c.container(s1, 'b', { tier: 'back' });
      const d = await c.running(s2, 'd', { tier: 'front' });
      await c.harness.exit(d, 1);
      assert.deepEqual(ids(await c.cri.listContainers({ labelSelector: c.label })), [a, b, d].sort());
      assert.deepEqual(ids(await c.cri.listContainers({ id: b })), [b]);
      assert.deepEqual(ids(await c.cri.listContainers({ podSandboxId: s1.id })), [a, b].sort());
      assert.deepEqual(ids(await c.cri.listContainers({ labelSelector: { ...c.label, tier: 'front' } })), [a, d].sort());
      assert.deepEqual(ids(await c.cri.listContainers({ labelSelector: c.label, state: { state: 'CONTAINER_RUNNING' } })), [a]);
      assert.deepEqual(ids(await c.cri.listContainers({ labelSelector: c.label, state: { state: 'CONTAINER_CREATED' } })), [b]);
      assert.deepEqual(ids(await c.cri.listContainers({ labelSelector: c.label, state: { state: 'CONTAINER_EXITED' } })), [d]);
      assert.deepEqual(ids(await c.cri.listContainers({ podSandboxId: s2.id, state: { state: 'CONTAINER_RUNNING' } })), []);
      assert.deepEqual(ids(await c.cri.listContainers({ id: a, podSandboxId: s2.id })), []);
      assert.deepEqual(ids(await c.cri.listContainers({ podSandboxId: s1.id, labelSelector: { tier: 'back' } })), [b]);
    }));
}

export function describeExecAndImageBehaviour(make: CriFactory): void {
  void it('lists a sandbox and a container with the same fields through their life, but for their state (what the list cache relies on)', () =>
    withCase(make, async (c) => {
      const s = await c.sandbox('pod');
      const id = await c.container(s, 'main');
      const listedSandbox = async (): Promise<Record<string, unknown>> => {
        const [found] = await c.cri.listPodSandbox({ id: s.id });
        assert.ok(found !== undefined, 'the sandbox is listed');
        const { state: _state, ...fixed } = found;
        return fixed;
      };
      const listedContainer = async (): Promise<Record<string, unknown>> => {
        const [found] = await c.cri.listContainers({ id });
        assert.ok(found !== undefined, 'the container is listed');
        const { state: _state, ...fixed } = found;
        return fixed;
      };
      const sandboxBefore = await listedSandbox();
      const created = await listedContainer();
      await c.cri.startContainer(id);
      assert.deepEqual(await listedContainer(), created, 'started');
      await c.harness.exit(id, 2);
      assert.deepEqual(await listedContainer(), created, 'exited');
      await c.cri.stopPodSandbox(s.id);
      assert.deepEqual(await listedSandbox(), sandboxBefore, 'a stopped sandbox');
      assert.deepEqual(await listedContainer(), created, 'its sandbox stopped');
    }));

  void it('runs commands with ExecSync: the exit code is a result, with the output of each stream', () =>
    withCase(make, async (c) => {
      const s = await c.sandbox('pod');
      const id = await c.running(s, 'main');
      for (const { cmd, result } of EXEC_CASES) assert.deepEqual(text(await c.cri.execSync({ containerId: id, cmd, timeout: 10 })), result, cmd.join(' '));
      const created = await c.container(s, 'idle');
      await rejectsOther(c.cri.execSync({ containerId: created, cmd: ['true'] }), 'ExecSync in a container not started');
      await c.harness.exit(id, 0);
      await rejectsOther(c.cri.execSync({ containerId: id, cmd: ['true'] }), 'ExecSync in an exited container');
    }));

  void it('has no status for an absent image; pulls, lists and removes (twice) an image by reference', () =>
    withCase(make, async (c) => {
      const { pullable, absent } = c.harness;
      assert.equal((await c.cri.imageStatus({ image: { image: absent } })).image, null);
      const ref = await c.cri.pullImage({ image: { image: pullable } });
      const image = (await c.cri.imageStatus({ image: { image: pullable } })).image;
      assert.equal(image?.id, ref, 'PullImage resolves to the image ID');
      assert.ok(image.repoTags.includes(pullable), `${pullable} in ${image.repoTags.join(', ')}`);
      assert.ok(int64(image.size) > 0n);
      assert.equal((await c.cri.imageStatus({ image: { image: ref } })).image?.id, ref, 'an image is found by its ID too');
      assert.ok((await c.cri.listImages()).some((i) => i.id === ref && i.repoTags.includes(pullable)));
      await c.cri.removeImage({ image: pullable });
      await c.cri.removeImage({ image: pullable });
      assert.equal((await c.cri.imageStatus({ image: { image: pullable } })).image, null);
      assert.equal((await c.cri.imageStatus({ image: { image: ref } })).image, null, 'every tag of the image is gone');
      assert.ok(!(await c.cri.listImages()).some((i) => i.id === ref));
      assert.equal(await c.cri.pullImage({ image: { image: pullable } }), ref, 'pulled again');
    }));

  void it('fails to pull an image the registry does not have, and to create a container of an absent image', () =>
    withCase(make, async (c) => {
      await rejectsNotFound(c.cri.pullImage({ image: { image: c.harness.absent } }), 'PullImage of an image the registry lacks');
      const s = await c.sandbox('pod');
      const config = { ...c.containerConfig(s.config, 'main'), image: { image: c.harness.absent } };
      await rejectsNotFound(c.cri.createContainer({ podSandboxId: s.id, sandboxConfig: s.config, config }), 'CreateContainer of an absent image');
      assert.deepEqual(await c.cri.listContainers({ podSandboxId: s.id }), []);
    }));
}
