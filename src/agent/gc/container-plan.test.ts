import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planContainerRemovals, planSandboxRemovals, type ContainerGCPolicy, type GcContainer, type GcSandbox, type PodStates } from './container-plan.js';

const NOW = 1_000_000;
const live: PodStates = { sourcesReady: () => true, isRemovable: () => false };
const policy = (p: Partial<ContainerGCPolicy> = {}): ContainerGCPolicy => ({ minAgeMs: 0, maxPerPodContainer: 1, maxContainers: -1, ...p });

/** Instances `<pod>/<name>#<n>` created at n seconds, exited unless named in `running`. */
function instances(pod: string, name: string, count: number, running: readonly number[] = []): GcContainer[] {
  return Array.from({ length: count }, (_, n) => ({
    id: `${pod}/${name}#${n}`, podUid: pod, name, sandboxId: `sb-${pod}`, state: running.includes(n) ? 'running' as const : 'exited' as const, createdAt: n * 1000,
  }));
}
const ids = (cs: readonly { readonly id: string }[]): string[] => cs.map((c) => c.id);

void describe('which dead containers go', () => {
  void it('keeps the newest per container up to the limit, oldest going first, never a running one', () => {
    const all = [...instances('a', 'main', 4, [3]), ...instances('b', 'main', 2)];
    assert.deepEqual(ids(planContainerRemovals(all, policy(), NOW, live)), ['a/main#0', 'b/main#0', 'a/main#1']);
    assert.deepEqual(ids(planContainerRemovals(all, policy({ maxPerPodContainer: 2 }), NOW, live)), ['a/main#0']);
    assert.deepEqual(ids(planContainerRemovals(all, policy({ maxPerPodContainer: -1 }), NOW, live)), []);
  });

  void it('keeps the newest dead instance of a pod still there even with a limit of 0', () => {
    assert.deepEqual(ids(planContainerRemovals(instances('a', 'init', 3), policy({ maxPerPodContainer: 0 }), NOW, live)), ['a/init#0', 'a/init#1']);
  });

  void it('leaves containers younger than the minimum age out of the limits', () => {
    const all = instances('a', 'main', 3);
    // #2 (2 s old at 4 s) is younger than 3 s: #0 and #1 are evictable, the limit keeps #1.
    assert.deepEqual(ids(planContainerRemovals(all, policy({ minAgeMs: 3000 }), 4000, live)), ['a/main#0']);
  });

  void it('removes every dead container of a pod that is gone, but only once the sources are ready', () => {
    const all = [...instances('gone', 'main', 2), ...instances('a', 'main', 1)];
    const pods = (ready: boolean): PodStates => ({ sourcesReady: () => ready, isRemovable: (uid) => uid === 'gone' });
    assert.deepEqual(ids(planContainerRemovals(all, policy(), NOW, pods(true))), ['gone/main#0', 'gone/main#1']);
    assert.deepEqual(ids(planContainerRemovals(all, policy(), NOW, pods(false))), ['gone/main#0']);
  });

  void it('bounds the node: an equal share per container first, then the oldest', () => {
    const all = [...instances('a', 'x', 4), ...instances('a', 'y', 4), ...instances('b', 'z', 2)];
    const removed = ids(planContainerRemovals(all, policy({ maxPerPodContainer: -1, maxContainers: 4 }), NOW, live));
    // 4 / 3 containers = 1 each (x#3, y#3, z#1 stay): within the bound of 4.
    assert.deepEqual(removed.sort(), ['a/x#0', 'a/x#1', 'a/x#2', 'a/y#0', 'a/y#1', 'a/y#2', 'b/z#0']);
    const two = ids(planContainerRemovals(instances('a', 'x', 5), policy({ maxPerPodContainer: -1, maxContainers: 2 }), NOW, live));
    assert.deepEqual(two, ['a/x#0', 'a/x#1', 'a/x#2']);
  });

  void it('cannot bound the node below one dead instance per container of the pods still there', () => {
    const all = [...instances('a', 'x', 2), ...instances('b', 'y', 2), ...instances('c', 'z', 2)];
    const removed = ids(planContainerRemovals(all, policy({ maxPerPodContainer: -1, maxContainers: 1 }), NOW, live));
    assert.deepEqual(removed.sort(), ['a/x#0', 'b/y#0', 'c/z#0']);
  });
});

void describe('which dead sandboxes go', () => {
  const sandbox = (id: string, podUid: string, createdAt: number, ready = false): GcSandbox => ({ id, podUid, ready, createdAt });

  void it('keeps the newest sandbox of a pod still there, and any that is ready or holds a container', () => {
    const sandboxes = [sandbox('a1', 'a', 1), sandbox('a2', 'a', 2), sandbox('a3', 'a', 3), sandbox('b1', 'b', 1, true), sandbox('b0', 'b', 0)];
    const remaining: GcContainer[] = [{ id: 'c', podUid: 'a', name: 'main', sandboxId: 'a1', state: 'exited', createdAt: 1 }];
    assert.deepEqual(ids(planSandboxRemovals(sandboxes, remaining, live)), ['a2', 'b0']);
  });

  void it('removes every dead sandbox of a pod that is gone', () => {
    const gone: PodStates = { sourcesReady: () => true, isRemovable: (uid) => uid === 'a' };
    assert.deepEqual(ids(planSandboxRemovals([sandbox('a1', 'a', 1), sandbox('a2', 'a', 2), sandbox('a3', 'a', 3, true)], [], gone)), ['a2', 'a1']);
  });
});
