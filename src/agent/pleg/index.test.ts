import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LogRoot } from '../logging/index.js';
import type { ObservedObject, PodStatusObserver } from '../kuberuntime/index.js';
import { POD_UID_LABEL } from '../kuberuntime/labels.js';
import { createPleg } from './index.js';

const logger = new LogRoot({ format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('test');
type Obj = ObservedObject & { labels: Record<string, string> };

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

void describe('PLEG', () => {
  void it('reports each pod whose sandboxes or containers changed, once per relist', async () => {
    let sandboxes: Obj[] = [{ id: 's1', state: 'SANDBOX_READY', labels: { [POD_UID_LABEL]: 'a' } }];
    let containers: Obj[] = [
      { id: 'c1', state: 'CONTAINER_RUNNING', labels: { [POD_UID_LABEL]: 'a' } },
      { id: 'c2', state: 'CONTAINER_RUNNING', labels: { [POD_UID_LABEL]: 'b' } },
      { id: 'x', state: 'CONTAINER_RUNNING', labels: {} },
    ];
    const changed: string[][] = [];
    let batch: string[] = [];
    const cache = new RecordingCache();
    const observed = cache.observed;
    let now = 1000;
    const pleg = createPleg({
      runtime: { listPodSandbox: () => Promise.resolve(sandboxes), listContainers: () => Promise.resolve(containers) },
      logger, now: () => now, cache,
      onPodChanged: (uid) => { batch.push(uid); },
    });
    const relist = async (): Promise<void> => {
      batch = [];
      await pleg.relist();
      changed.push(batch.sort());
    };
    assert.equal(pleg.health().healthy, false);
    await relist();
    assert.deepEqual(observed.get('a'), ['c1 CONTAINER_RUNNING', 's1 SANDBOX_READY'], 'what the relist found of the pod, sorted');
    await relist();
    containers = [{ ...containers[0]!, state: 'CONTAINER_EXITED' }, containers[1]!];
    await relist();
    assert.deepEqual(observed.get('a'), ['c1 CONTAINER_EXITED', 's1 SANDBOX_READY']);
    sandboxes = [];
    containers = [containers[0]!];
    await relist();
    assert.deepEqual(changed, [['a', 'b'], [], ['a'], ['a', 'b']]);
    assert.deepEqual(observed.get('b'), [], 'a pod gone: nothing found of it');
    assert.deepEqual(cache.relists.map((r) => [...(r.seen ?? [])].sort()), [['a', 'b'], ['a', 'b'], ['a', 'b'], ['a']]);
    // A change the cache takes for the agent's own asks no sync.
    cache.own.add('a');
    containers = [];
    await relist();
    assert.deepEqual(changed.at(-1), []);
    assert.deepEqual(observed.get('a'), []);
    assert.equal(pleg.health().healthy, true);
    now += 4 * 60_000;
    assert.match(pleg.health().message, /the last relist was 240s ago/);
    await pleg.stop();
  });

  void it('passes a relist that finds everything as before without a change, and sees a swap of one container for another', async () => {
    const sandboxes: Obj[] = [{ id: 's1', state: 'SANDBOX_READY', labels: { [POD_UID_LABEL]: 'a' } }];
    let containers: Obj[] = [{ id: 'c1', state: 'CONTAINER_RUNNING', labels: { [POD_UID_LABEL]: 'a' } }];
    const changed: string[] = [];
    const cache = new RecordingCache();
    const pleg = createPleg({
      runtime: { listPodSandbox: () => Promise.resolve(sandboxes), listContainers: () => Promise.resolve(containers) },
      logger, cache,
      onPodChanged: (uid) => changed.push(uid),
    });
    await pleg.relist();
    await pleg.relist();
    assert.deepEqual(changed, ['a']);
    assert.equal(cache.relists[1]?.seen, cache.relists[0]?.seen, 'the same set of pods handed on');
    // As many objects as before, one of them new: a change.
    containers = [{ id: 'c2', state: 'CONTAINER_RUNNING', labels: { [POD_UID_LABEL]: 'a' } }];
    await pleg.relist();
    assert.deepEqual(changed, ['a', 'a']);
    // An object without the pod UID label does not count; one gone does.
    containers = [{ id: 'x', state: 'CONTAINER_RUNNING', labels: {} }];
    await pleg.relist();
    assert.deepEqual(changed, ['a', 'a', 'a']);
    assert.deepEqual([...(cache.relists.at(-1)?.seen ?? [])], ['a']);
    await pleg.stop();
  });

  void it('stays unhealthy and quiet while the runtime is down', async () => {
    const seen: string[] = [];
    const pleg = createPleg({
      runtime: { listPodSandbox: () => Promise.reject(new Error('connection refused')), listContainers: () => Promise.resolve([]) },
      logger, cache: new RecordingCache(), onPodChanged: (uid) => seen.push(uid),
    });
    await pleg.relist();
    assert.deepEqual(seen, []);
    assert.match(pleg.health().message, /has not relisted yet: connection refused/);
    await pleg.stop();
  });
});
