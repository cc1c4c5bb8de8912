import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PodStatus } from 'kubernetes-types/core/v1.js';
import type { NodePod } from '../../api/pod/index.js';
import { FakeClock } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import type { PodConfigUpdate } from '../syncloop/index.js';
import { runPodsOnce, type RunOnceOptions } from './index.js';

const pod = (name: string): NodePod => ({ metadata: { name, namespace: 'default', uid: name }, spec: { containers: [{ name: 'app' }] } });
const running: PodStatus = { phase: 'Running', containerStatuses: [{ name: 'app', ready: true, restartCount: 0, image: 'i', imageID: 'i', state: { running: {} } }] };
const waiting: PodStatus = { phase: 'Pending', containerStatuses: [{ name: 'app', ready: false, restartCount: 0, image: 'i', imageID: 'i', state: { waiting: { reason: 'ImagePullBackOff' } } }] };

function setup(pods: NodePod[], settlesAfter: Map<string, number>, capacity = 110) {
  const clock = new FakeClock();
  const statuses = new Map<string, PodStatus>();
  const syncs: string[] = [];
  let ready = false;
  let listener: (u: PodConfigUpdate) => void = () => undefined;
  const options: RunOnceOptions = {
    podConfig: {
      subscribe: (l) => { listener = l; return () => undefined; },
      start: () => { listener({ op: 'ADD', pods }); ready = true; return Promise.resolve(); },
      stop: () => Promise.resolve(),
      sourcesReady: () => ready,
    },
    syncer: {
      syncPod: (p) => {
        const name = p.metadata.name;
        syncs.push(`${name}@${clock.now()}`);
        const left = (settlesAfter.get(name) ?? 1) - 1;
        settlesAfter.set(name, left);
        statuses.set(name, left <= 0 ? running : waiting);
        return Promise.resolve({});
      },
    },
    status: { getPodStatus: (uid) => statuses.get(uid) },
    capacity, logger: new FakeLogger(), clock,
  };
  return { clock, options, syncs };
}

void describe('runPodsOnce', () => {
  void it('syncs each pod until it runs, pausing 1 s, then 2 s, ... between attempts', async () => {
    const { clock, options, syncs } = setup([pod('a'), pod('b')], new Map([['a', 1], ['b', 3]]));
    const start = clock.now();
    const done = runPodsOnce(options);
    await clock.advance(10_000);
    const results = await done;
    assert.deepEqual(results?.map((r) => [r.ok, r.line]), [
      [true, 'pod "a_default": Running app=running'],
      [true, 'pod "b_default": Running app=running'],
    ]);
    assert.deepEqual(syncs.filter((s) => s.startsWith('b')).map((s) => Number(s.split('@')[1]) - start), [0, 1000, 3000]);
  });

  void it('gives up after ten attempts, and refuses the pods beyond the capacity', async () => {
    const { clock, options } = setup([pod('a'), pod('b')], new Map([['a', 99]]), 1);
    const done = runPodsOnce(options);
    await clock.advance(2_000_000);
    const results = await done;
    assert.deepEqual(results?.map((r) => [r.ok, r.line]), [
      [false, 'pod "a_default": Pending app=waiting(ImagePullBackOff)'],
      [false, 'pod "b_default": rejected (OutOfpods: capacity 1)'],
    ]);
  });
});
