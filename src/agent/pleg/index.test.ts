import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, settle } from '../../api/fake-clock.js';
import { LogRoot } from '../logging/index.js';
import type { ObservedObject, PodStatusObserver } from '../kuberuntime/index.js';
import { POD_UID_LABEL } from '../kuberuntime/index.js';
import type { PodSandboxConfig } from '../runtime/cri/index.js';
import { FakeRuntime } from '../runtime/cri/testing.js';
import { createPleg } from './index.js';

const logger = new LogRoot({ clock: new FakeClock(), format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('test');

/** A pod status cache that records what the PLEG tells it and explains nothing. */
class RecordingCache implements PodStatusObserver {
  readonly observed = new Map<string, string[]>();
  readonly relists: { startedAt: number; seen: ReadonlySet<string> | undefined }[] = [];
  /** Pods whose changes the cache takes for the agent's own. */
  readonly own = new Set<string>();
  observe(uid: string, observed: readonly ObservedObject[]): (() => boolean) | undefined {
    this.observed.set(uid, observed.map((o) => `${o.id} ${o.state}`).sort());
    return this.own.has(uid) ? undefined : () => true;
  }
  relisted(startedAt: number, seen?: ReadonlySet<string>): void {
    this.relists.push({ startedAt, seen });
  }
}

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
    const cache = new RecordingCache();
    const observed = cache.observed;
    const clock = new FakeClock();
    const pleg = createPleg({
      runtime: fake,
      logger, clock, cache,
      onPodChanged: (uid) => { batch.push(uid); },
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
    assert.deepEqual(cache.relists.map((r) => [...(r.seen ?? [])].sort()), [['a', 'b'], ['a', 'b'], ['a', 'b'], ['a']]);
    // A change the cache takes for the agent's own asks no sync.
    cache.own.add('a');
    await fake.removeContainer(c1);
    await relist();
    assert.deepEqual(changed.at(-1), []);
    assert.deepEqual(observed.get('a'), [`${s1.id} SANDBOX_NOTREADY`]);
    assert.equal(pleg.health().healthy, true);
    clock.set(clock.now() + 3 * 60_000);
    assert.equal(pleg.health().healthy, true, 'a relist 3 minutes old is the threshold');
    clock.set(clock.now() + 60_000);
    assert.equal(pleg.health().healthy, false);
    assert.match(pleg.health().message, /the last relist was 240s ago \(threshold 180s\)/);
    await pleg.stop();
  });

  void it('passes a relist that finds everything as before without a change, and sees a swap of one container for another', async () => {
    const { fake, sandbox, running } = runtime();
    const s1 = await sandbox('a');
    const c1 = await running(s1, 'c1');
    const changed: string[] = [];
    const cache = new RecordingCache();
    const seen = cache.relists;
    const pleg = createPleg({
      runtime: fake,
      logger, cache, clock: new FakeClock(),
      onPodChanged: (uid) => changed.push(uid),
    });
    await pleg.relist();
    await pleg.relist();
    assert.deepEqual(changed, ['a']);
    assert.equal(seen[1]?.seen, seen[0]?.seen, 'the same set of pods handed on');
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
    assert.deepEqual([...(seen.at(-1)?.seen ?? [])], ['a']);
    await pleg.stop();
  });

  void it('stays unhealthy and quiet while the runtime is down', async () => {
    const { fake, sandbox, running } = runtime();
    await running(await sandbox('a'), 'c1');
    fake.failNext('listPodSandbox', new Error('connection refused'));
    const seen: string[] = [];
    const pleg = createPleg({ runtime: fake, logger, cache: new RecordingCache(), clock: new FakeClock(), onPodChanged: (uid) => seen.push(uid) });
    await pleg.relist();
    assert.deepEqual(seen, []);
    assert.match(pleg.health().message, /has not relisted yet: connection refused/);
    await pleg.stop();
  });

  void it('relists at once on start, then every relist period after the previous relist ended', async () => {
    const clock = new FakeClock();
    let lists = 0;
    const pleg = createPleg({
      runtime: { listPodSandbox: () => { lists++; return Promise.resolve([]); }, listContainers: () => Promise.resolve([]) },
      logger, clock, cache: new RecordingCache(), relistPeriodMs: 1000, onPodChanged: () => undefined,
    });
    pleg.start();
    await settle();
    assert.equal(lists, 1);
    assert.equal(pleg.health().lastRelist, clock.now());
    assert.deepEqual(clock.pending().map((t) => t.delayMs), [1000]);
    await clock.advance(999);
    assert.equal(lists, 1);
    await clock.advance(1);
    assert.equal(lists, 2);
    await clock.advance(3000);
    assert.equal(lists, 5);
    await pleg.stop();
    assert.deepEqual(clock.pending(), [], 'stop() cancels the next relist');
  });
});
