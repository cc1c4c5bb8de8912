import assert from 'node:assert/strict';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { OrchError } from '../../api/errors.js';
import { FakeLogger } from '../logging/testing.js';
import { createContainerGC, type ContainerGCOptions } from './container-gc.js';
import { GcNode } from './fixtures.js';

const nodes: GcNode[] = [];
after(async () => {
  for (const n of nodes) await rm(n.logsDir, { recursive: true, force: true });
});

async function gcNode(): Promise<GcNode> {
  const n = await GcNode.create();
  nodes.push(n);
  return n;
}

function gc(n: GcNode, extra: Partial<ContainerGCOptions> = {}) {
  const changed: string[] = [];
  const removed: string[] = [];
  const collector = createContainerGC({
    runtime: n.runtime, pods: n.pods, podLogsDir: n.logsDir, now: () => n.now, logger: new FakeLogger(),
    policy: { minAgeMs: 0, maxPerPodContainer: 1, maxContainers: -1 },
    onPodChanged: (uid) => changed.push(uid), onRemoved: (o) => removed.push(o),
    ...extra,
  });
  return { collector, changed, removed };
}

const files = async (dir: string): Promise<string[]> => (await readdir(dir)).sort();

void describe('a container GC pass', () => {
  void it('removes the older dead instances of a crash-looping container with their log files, keeping the newest dead one', async () => {
    const n = await gcNode();
    const sb = await n.sandbox('a');
    const dead: string[] = [];
    for (let i = 0; i < 3; i++) {
      n.now += 1000;
      dead.push(await n.container(sb, 'main', i));
    }
    n.now += 1000;
    const running = await n.container(sb, 'main', 3, { running: true });
    const { collector, changed, removed } = gc(n);
    assert.deepEqual(await collector.collect(), { containers: 2, sandboxes: 0, logDirectories: 0 });
    assert.deepEqual(n.containerIds().sort(), [dead[2], running].sort());
    assert.deepEqual(await files(path.join(n.logsDir, 'ns_a_a', 'main')), ['2.log', '2.log.20240101-000000.gz', '3.log', '3.log.20240101-000000.gz']);
    assert.deepEqual(changed, ['a']);
    assert.deepEqual(removed, ['container', 'container']);
    assert.deepEqual(n.runtime.callsOf('removeContainer'), [dead[0], dead[1]], 'oldest first');
  });

  void it('removes what a pod that is gone left (containers, sandboxes, log directory) once the sources are ready', async () => {
    const n = await gcNode();
    const old = await n.sandbox('gone');
    await n.container(old, 'main', 0);
    await n.runtime.stopPodSandbox(old);
    n.now += 1000;
    const newer = await n.sandbox('gone');
    await n.container(newer, 'main', 1);
    await n.runtime.stopPodSandbox(newer);
    n.gone.add('gone');
    n.ready = false;
    const { collector } = gc(n);
    assert.deepEqual(await collector.collect(), { containers: 1, sandboxes: 1, logDirectories: 0 }, 'before: the limits only, the newest sandbox kept');
    n.ready = true;
    assert.deepEqual(await collector.collect(), { containers: 1, sandboxes: 1, logDirectories: 1 });
    assert.deepEqual([n.containerIds(), [...n.runtime.sandboxes.keys()], await files(n.logsDir)], [[], [], []]);
  });

  void it('with evictTerminatedPods also removes the dead containers and sandboxes of terminated pods still wanted, keeping their logs', async () => {
    const n = await gcNode();
    const sb = await n.sandbox('done');
    await n.container(sb, 'main', 0);
    await n.runtime.stopPodSandbox(sb);
    const terminated = new Set(['done']);
    const { collector } = gc(n, { pods: { ...n.pods, isTerminated: (uid) => terminated.has(uid) } });
    assert.deepEqual(await collector.collect(), { containers: 0, sandboxes: 0, logDirectories: 0 }, 'a periodic pass keeps the newest of a pod still wanted');
    assert.deepEqual(await collector.collect({ evictTerminatedPods: true }), { containers: 1, sandboxes: 1, logDirectories: 0 });
    assert.deepEqual(await files(n.logsDir), ['ns_done_done']);
  });

  void it('removes the log directories of pods that are gone and nothing the runtime still holds or that is not a pod directory', async () => {
    const n = await gcNode();
    await n.sandbox('held'); // ready: the runtime holds it although no source wants it
    n.gone.add('held');
    n.gone.add('ghost');
    for (const d of ['ns_ghost_ghost/main', 'ns_live_live', 'notes', 'a_b']) await mkdir(path.join(n.logsDir, d), { recursive: true });
    n.gone.add('b');
    const { collector } = gc(n);
    assert.deepEqual(await collector.collect(), { containers: 0, sandboxes: 0, logDirectories: 1 });
    assert.deepEqual(await files(n.logsDir), ['a_b', 'notes', 'ns_held_held', 'ns_live_live']);
  });

  void it('never touches containers or sandboxes without the agent label, nor the log directory of such a sandbox', async () => {
    const n = await gcNode();
    const sb = await n.sandbox('other', false);
    for (let i = 0; i < 3; i++) await n.container(sb, 'main', i);
    await n.runtime.stopPodSandbox(sb);
    n.gone.add('other');
    assert.deepEqual(await gc(n).collector.collect(), { containers: 0, sandboxes: 0, logDirectories: 0 });
    assert.equal(n.containerIds().length, 3);
  });

  void it('tries every removal and names each failure', async () => {
    const n = await gcNode();
    const sb = await n.sandbox('a');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      n.now += 1000;
      ids.push(await n.container(sb, 'main', i));
    }
    n.runtime.failNext('removeContainer', new OrchError('CRI_ERROR', 'internal', 'device busy'));
    await assert.rejects(gc(n).collector.collect(), (err: unknown) =>
      err instanceof OrchError && err.code === 'GC_CONTAINER_FAILED' && err.message.includes(`container ${ids[0] ?? ''} (main of pod a): device busy`));
    assert.deepEqual(n.containerIds().sort(), [ids[0], ids[2]].sort(), 'the next one was removed all the same');
  });
});
