import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LogRoot } from '../logging/index.js';
import { POD_UID_LABEL } from '../kuberuntime/labels.js';
import type { PodSandboxConfig } from '../runtime/cri/index.js';
import { FakeRuntime } from '../runtime/cri/testing.js';
import { createPleg } from './index.js';

const logger = new LogRoot({ format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('test');

/** A runtime whose pods the tests make: a sandbox per pod, labelled with the pod UID unless `uid` is undefined. */
function runtime(): {
  fake: FakeRuntime;
  sandbox: (uid: string | undefined) => Promise<{ id: string; config: PodSandboxConfig }>;
  running: (sandbox: { id: string; config: PodSandboxConfig }, name: string) => Promise<string>;
} {
  const fake = new FakeRuntime();
  fake.images.set('img', 'sha256:img');
  let n = 0;
  return {
    fake,
    sandbox: async (uid) => {
      const labels = uid === undefined ? {} : { [POD_UID_LABEL]: uid };
      const config = { metadata: { name: `pod-${++n}`, uid: uid ?? `unlabelled-${n}`, namespace: 'default', attempt: 0 }, labels };
      return { id: await fake.runPodSandbox({ config }), config };
    },
    running: async (sandbox, name) => {
      const config = { metadata: { name, attempt: 0 }, image: { image: 'img' }, labels: sandbox.config.labels ?? {} };
      const id = await fake.createContainer({ podSandboxId: sandbox.id, sandboxConfig: sandbox.config, config });
      await fake.startContainer(id);
      return id;
    },
  };
}

void describe('PLEG', () => {
  void it('reports each pod whose sandboxes or containers changed, once per relist', async () => {
    const { fake, sandbox, running } = runtime();
    const s1 = await sandbox('a');
    const c1 = await running(s1, 'c1');
    const s2 = await sandbox('b');
    await running(s2, 'c2');
    const other = await sandbox(undefined);
    const x = await running(other, 'x');
    const changed: string[][] = [];
    let batch: string[] = [];
    const observed = new Map<string, readonly string[]>();
    const seenByRelist: string[][] = [];
    let now = 1000;
    const pleg = createPleg({
      runtime: fake,
      logger, now: () => now,
      onPodChanged: (uid, entries) => {
        batch.push(uid);
        observed.set(uid, entries);
      },
      onRelisted: (_startedAt, seen) => seenByRelist.push([...seen].sort()),
    });
    const relist = async (): Promise<void> => {
      batch = [];
      await pleg.relist();
      changed.push(batch.sort());
    };
    assert.equal(pleg.health().healthy, false);
    await relist();
    assert.deepEqual(observed.get('a'), [`${c1} CONTAINER_RUNNING`, `${s1.id} SANDBOX_READY`].sort(), 'what the relist found of the pod, sorted');
    await relist();
    fake.exit(c1, 1);
    await relist();
    assert.deepEqual(observed.get('a'), [`${c1} CONTAINER_EXITED`, `${s1.id} SANDBOX_READY`].sort());
    await fake.stopPodSandbox(s1.id);
    await fake.removePodSandbox(s2.id);
    await fake.removeContainer(x);
    await relist();
    assert.deepEqual(changed, [['a', 'b'], [], ['a'], ['a', 'b']]);
    assert.deepEqual(observed.get('a'), [`${c1} CONTAINER_EXITED`, `${s1.id} SANDBOX_NOTREADY`].sort());
    assert.deepEqual(observed.get('b'), [], 'a pod gone: nothing found of it');
    assert.deepEqual(seenByRelist, [['a', 'b'], ['a', 'b'], ['a', 'b'], ['a']]);
    assert.equal(pleg.health().healthy, true);
    now += 4 * 60_000;
    assert.match(pleg.health().message, /the last relist was 240s ago/);
    await pleg.stop();
  });

  void it('passes a relist that finds everything as before without a change, and sees a swap of one container for another', async () => {
    const { fake, sandbox, running } = runtime();
    const s1 = await sandbox('a');
    const c1 = await running(s1, 'c1');
    const changed: string[] = [];
    const seen: ReadonlySet<string>[] = [];
    const pleg = createPleg({
      runtime: fake,
      logger,
      onPodChanged: (uid) => changed.push(uid),
      onRelisted: (_startedAt, s) => seen.push(s),
    });
    await pleg.relist();
    await pleg.relist();
    assert.deepEqual(changed, ['a']);
    assert.equal(seen[1], seen[0], 'the same set of pods handed on');
    // As many objects as before, one of them new: a change.
    await fake.removeContainer(c1);
    const c2 = await running(s1, 'c2');
    await pleg.relist();
    assert.deepEqual(changed, ['a', 'a']);
    // An object without the pod UID label does not count; one gone does.
    await fake.removeContainer(c2);
    await running(await sandbox(undefined), 'x');
    await pleg.relist();
    assert.deepEqual(changed, ['a', 'a', 'a']);
    assert.deepEqual([...(seen.at(-1) ?? [])], ['a']);
    await pleg.stop();
  });

  void it('stays unhealthy and quiet while the runtime is down', async () => {
    const { fake, sandbox, running } = runtime();
    await running(await sandbox('a'), 'c1');
    fake.failNext('listPodSandbox', new Error('connection refused'));
    const seen: string[] = [];
    const pleg = createPleg({ runtime: fake, logger, onPodChanged: (uid) => seen.push(uid) });
    await pleg.relist();
    assert.deepEqual(seen, []);
    assert.match(pleg.health().message, /has not relisted yet: connection refused/);
    await pleg.stop();
  });
});
