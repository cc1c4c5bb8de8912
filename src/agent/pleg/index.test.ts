import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, settle } from '../../api/fake-clock.js';
import { LogRoot } from '../logging/index.js';
import { POD_UID_LABEL } from '../kuberuntime/labels.js';
import { createPleg } from './index.js';

const logger = new LogRoot({ format: 'text', verbosity: 0, vmodule: [], splitStream: false, infoBufferSize: 0, flushFrequency: 5e9, sink: { write: () => undefined } }).logger('test');
type Obj = { id: string; state: string; labels: Record<string, string> };

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
    const observed = new Map<string, readonly string[]>();
    const seenByRelist: string[][] = [];
    const clock = new FakeClock();
    const pleg = createPleg({
      runtime: { listPodSandbox: () => Promise.resolve(sandboxes), listContainers: () => Promise.resolve(containers) },
      logger, clock,
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
    assert.deepEqual(seenByRelist, [['a', 'b'], ['a', 'b'], ['a', 'b'], ['a']]);
    assert.equal(pleg.health().healthy, true);
    clock.set(clock.now() + 3 * 60_000);
    assert.equal(pleg.health().healthy, true, 'a relist 3 minutes old is the threshold');
    clock.set(clock.now() + 60_000);
    assert.equal(pleg.health().healthy, false);
    assert.match(pleg.health().message, /the last relist was 240s ago \(threshold 180s\)/);
    await pleg.stop();
  });

  void it('passes a relist that finds everything as before without a change, and sees a swap of one container for another', async () => {
    const sandboxes: Obj[] = [{ id: 's1', state: 'SANDBOX_READY', labels: { [POD_UID_LABEL]: 'a' } }];
    let containers: Obj[] = [{ id: 'c1', state: 'CONTAINER_RUNNING', labels: { [POD_UID_LABEL]: 'a' } }];
    const changed: string[] = [];
    const seen: ReadonlySet<string>[] = [];
    const pleg = createPleg({
      runtime: { listPodSandbox: () => Promise.resolve(sandboxes), listContainers: () => Promise.resolve(containers) },
      logger, clock: new FakeClock(),
      onPodChanged: (uid) => changed.push(uid),
      onRelisted: (_startedAt, s) => seen.push(s),
    });
    await pleg.relist();
    await pleg.relist();
    assert.deepEqual(changed, ['a']);
    assert.equal(seen[1], seen[0], 'the same set of pods handed on');
    // As many objects as before, one of them new: a change.
    containers = [{ id: 'c2', state: 'CONTAINER_RUNNING', labels: { [POD_UID_LABEL]: 'a' } }];
    await pleg.relist();
    assert.deepEqual(changed, ['a', 'a']);
    // An object without the pod UID label does not count; one gone does.
    containers = [{ id: 'x', state: 'CONTAINER_RUNNING', labels: {} }];
    await pleg.relist();
    assert.deepEqual(changed, ['a', 'a', 'a']);
    assert.deepEqual([...(seen.at(-1) ?? [])], ['a']);
    await pleg.stop();
  });

  void it('stays unhealthy and quiet while the runtime is down', async () => {
    const seen: string[] = [];
    const pleg = createPleg({
      runtime: { listPodSandbox: () => Promise.reject(new Error('connection refused')), listContainers: () => Promise.resolve([]) },
      logger, clock: new FakeClock(), onPodChanged: (uid) => seen.push(uid),
    });
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
      logger, clock, relistPeriodMs: 1000, onPodChanged: () => undefined,
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
