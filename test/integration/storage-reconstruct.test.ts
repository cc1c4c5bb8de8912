/**
 * Volume reconstruction after `kill -9` of the agent (upstream: the volume manager's
 * reconstruction from the pod directories): orch-apiserver, a real containerd, the nodeagent
 * binary and the sample CSI driver. Before the kill: a CSI volume shared by two running pods
 * (staged once, published twice), a second CSI volume used by one pod, a local volume used by
 * one pod. While the agent is down, one pod of the shared volume and the pod of the second
 * volume are deleted. The restarted agent
 *
 * - neither stages nor publishes the volumes of the pods still running (the driver's calls show
 *   no second NodeStageVolume or NodePublishVolume), and their containers keep running;
 * - unpublishes the volumes of the deleted pods from their directories' vol_data.json, and
 *   unstages the volume no pod uses any more (not the shared one);
 * - publishes the shared volume for a new pod without staging it again.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { runKubectl } from '../helpers/apiserver.js';
import { claim, claimPod, csiDriverObject, csiVolume, localVolume, startStorageStack, type StorageStack } from '../helpers/storage.js';
import { waitFor } from '../helpers/wait.js';

let s: StorageStack;

before(async () => {
  s = await startStorageStack({ objects: [csiDriverObject({ attachRequired: false })] });
  await s.driver.waitFor('registration-status');
});

after(async () => {
  await s.stop();
});

const csiDir = (pod: Pod, pv: string): string => join(s.rootDir, 'pods', pod.metadata?.uid ?? '', 'volumes', 'orch.io~csi', pv);
const containerIDs = (pod: Pod): string[] => (pod.status?.containerStatuses ?? []).map((c) => `${c.containerID ?? ''}/${c.restartCount}`);
const targets = (method: string): string[] => s.driver.calls(method).map((c) => {
  const path = c.request?.['targetPath'] ?? c.request?.['stagingTargetPath'];
  return typeof path === 'string' ? path : '';
});

void describe('volume reconstruction after kill -9 of the agent', () => {
  void it('keeps the mounted volumes of running pods, and tears down those of pods deleted while it was down', async () => {
    const disk = join(s.dir, 'disk');
    await mkdir(disk);
    await s.create([csiVolume('shared', 'vol-shared'), claim('shared', 'shared'), csiVolume('single', 'vol-single'), claim('single', 'single'), localVolume('local', disk), claim('local', 'local')]);
    await s.create([
      claimPod('keep', 'shared', 'echo kept > /data/file && sleep 3600'),
      claimPod('gone-shared', 'shared', 'sleep 3600'),
      claimPod('gone-single', 'single', 'sleep 3600'),
      claimPod('keep-local', 'local', 'echo local > /data/file && sleep 3600'),
    ]);
    const keep = await s.waitForPhase('keep', 'Running');
    const goneShared = await s.waitForPhase('gone-shared', 'Running');
    const goneSingle = await s.waitForPhase('gone-single', 'Running');
    const keepLocal = await s.waitForPhase('keep-local', 'Running');
    assert.deepEqual([s.driver.calls('NodeStageVolume').length, s.driver.calls('NodePublishVolume').length], [2, 3]);
    const before = { keep: containerIDs(keep), keepLocal: containerIDs(keepLocal) };

    await s.agent.kill();
    await runKubectl(s.server, ['delete', 'pod', 'gone-shared', 'gone-single', '--force', '--grace-period=0']);
    const mark = s.driver.events.length;
    await s.restartAgent();

    await waitFor('the deleted pods unpublished', () => {
      const done = targets('NodeUnpublishVolume');
      return done.includes(join(csiDir(goneShared, 'shared'), 'mount')) && done.includes(join(csiDir(goneSingle, 'single'), 'mount'));
    }, { timeoutMs: 90_000 });
    await waitFor('the volume no pod uses unstaged', () => s.driver.calls('NodeUnstageVolume').length === 1, { timeoutMs: 30_000 });
    assert.match(targets('NodeUnstageVolume')[0] ?? '', /globalmount$/);
    assert.equal(s.driver.calls('NodeUnstageVolume')[0]?.request?.['volumeId'], 'vol-single', 'the shared volume stays staged');
    await waitFor('the deleted pods\' directories removed', () => ![goneShared, goneSingle].some((p) => existsSync(join(s.rootDir, 'pods', p.metadata?.uid ?? ''))), { timeoutMs: 30_000 });

    // The running pods: neither staged nor published again; the same containers, not restarted.
    const later = s.driver.events.slice(mark).filter((e) => e.event === 'call').map((e) => e.method);
    assert.equal(later.filter((m) => m === 'NodeStageVolume' || m === 'NodePublishVolume').length, 0, `calls after the restart: ${later.join(', ')}`);
    await waitFor('the restarted agent reports the pods', async () => (await s.pod('keep'))?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    assert.deepEqual(containerIDs((await s.pod('keep')) ?? {}), before.keep);
    assert.deepEqual(containerIDs((await s.pod('keep-local')) ?? {}), before.keepLocal);
    assert.ok(existsSync(join(csiDir(keep, 'shared'), 'vol_data.json')));

    // A new pod on the shared volume: published, not staged again.
    await s.create([claimPod('reader', 'shared', 'test "$(cat /data/file)" = kept', 'Never')]);
    await s.waitForPhase('reader', 'Succeeded');
    assert.equal(s.driver.calls('NodeStageVolume').length, 2, 'no second stage of the shared volume');
    assert.equal(await readFile(join(disk, 'file'), 'utf8'), 'local\n');
    await runKubectl(s.server, ['delete', 'pod', 'keep', 'keep-local', 'reader', '--wait=true']);
    await waitFor('the shared volume unstaged after its last pod', () => s.driver.calls('NodeUnstageVolume').length === 2, { timeoutMs: 60_000 });
  });
});
