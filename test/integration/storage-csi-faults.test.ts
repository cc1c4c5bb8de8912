/**
 * A misbehaving CSI driver on the node: orch-apiserver, a real containerd, the nodeagent binary
 * with a 5 s CSI call deadline (NODEAGENT_CSI_TIMEOUT) and the sample CSI driver:
 *
 * - a driver whose NodeStageVolume answers after the deadline: a FailedMount event naming the
 *   volume, the call and DeadlineExceeded, retried; a pod without CSI volumes runs meanwhile;
 *   once the driver answers in time the pod runs, and once deleted nothing of it is left
 *   (directories, mounts);
 * - a driver whose socket disappears while NodePublishVolume is in flight (the driver stops and
 *   removes its sockets): a FailedMount event naming the volume and the cause, then the driver
 *   named as not registered, retried; another pod runs meanwhile; the driver started again, the
 *   pod runs; deleted, nothing of it is left.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { runKubectl } from '../helpers/apiserver.js';
import { claim, claimPod, csiDriverObject, csiVolume, podWith, startStorageStack, type StorageStack } from '../helpers/storage.js';
import { waitFor } from '../helpers/wait.js';

let s: StorageStack;

before(async () => {
  s = await startStorageStack({ objects: [csiDriverObject({ attachRequired: false })], agentEnv: { NODEAGENT_CSI_TIMEOUT: '5s' } });
  await s.driver.waitFor('registration-status');
});

after(async () => {
  await s.stop();
});

/** Nothing of the pod left: its directory and any mount below the agent's root dir naming it or the volume's staging. */
async function assertNothingLeft(pod: Pod, handle: string): Promise<void> {
  const uid = pod.metadata?.uid ?? '';
  await waitFor(`pod ${uid}'s directory removed`, () => !existsSync(join(s.rootDir, 'pods', uid)), { timeoutMs: 60_000 });
  await waitFor(`${handle} unstaged`, () => s.driver.replies('NodeUnstageVolume').length >= s.driver.calls('NodeUnstageVolume').length
    && s.driver.calls('NodeUnstageVolume').some((c) => c.request?.['volumeId'] === handle), { timeoutMs: 60_000 });
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4] ?? '').filter((m) => m.startsWith(s.rootDir));
  assert.deepEqual(mounts.filter((m) => m.includes(uid) || m.includes('/plugins/orch.io/csi/')), [], 'no mount left');
}

void describe('a misbehaving CSI driver', () => {
  void it('reports a call past the deadline on the pod, retries, and leaves nothing once the pod goes', async () => {
    await s.create([csiVolume('slow', 'vol-slow'), claim('slow', 'slow')]);
    s.driver.setDelay(['NodeStageVolume'], 12_000);
    await s.create([claimPod('slow', 'slow', 'sleep 3600'), podWith('bystander', { emptyDir: {} }, 'sleep 3600')]);
    await s.waitForEvent('slow', 'FailedMount', /volume "data": CSI driver hostpath\.csi\.example\.com: NodeStageVolume of vol-slow failed: rpc error: code = DeadlineExceeded/, 90_000);
    await s.waitForPhase('bystander', 'Running');
    await waitFor('a retry', () => s.driver.calls('NodeStageVolume').length >= 2, { timeoutMs: 60_000 });
    assert.notEqual((await s.pod('slow'))?.status?.phase, 'Running');
    s.driver.setDelay(['NodeStageVolume'], 0);
    const pod = await s.waitForPhase('slow', 'Running', 120_000);
    // The late answers of the calls that timed out come in before the pod goes (they would stage again after the unstage).
    await waitFor('the late calls answered', () => s.driver.replies('NodeStageVolume').length === s.driver.calls('NodeStageVolume').length, { timeoutMs: 30_000 });
    await runKubectl(s.server, ['delete', 'pod', 'slow', 'bystander', '--wait=true']);
    await assertNothingLeft(pod, 'vol-slow');
  });

  void it('reports a driver whose socket disappears mid-mount, retries until it is back, and leaves nothing once the pod goes', async () => {
    await s.create([csiVolume('gone', 'vol-gone'), claim('gone', 'gone')]);
    s.driver.setDelay(['NodePublishVolume'], 60_000);
    const mark = s.driver.calls('NodePublishVolume').length;
    await s.create([claimPod('stranded', 'gone', 'sleep 3600')]);
    await waitFor('NodePublishVolume in flight', () => s.driver.calls('NodePublishVolume').length > mark, { timeoutMs: 60_000 });
    await s.driver.kill();
    await s.waitForEvent('stranded', 'FailedMount', /volume "data": CSI driver hostpath\.csi\.example\.com: NodePublishVolume of vol-gone failed: rpc error: code = (Unavailable|Canceled)/);
    await s.waitForEvent('stranded', 'FailedMount', /volume "data": driver name hostpath\.csi\.example\.com not found in the list of registered CSI drivers/, 90_000);
    await s.create([podWith('unaffected', { emptyDir: {} }, 'sleep 3600')]);
    await s.waitForPhase('unaffected', 'Running');
    await s.restartDriver();
    const pod = await s.waitForPhase('stranded', 'Running', 120_000);
    await runKubectl(s.server, ['delete', 'pod', 'stranded', 'unaffected', '--wait=true']);
    await assertNothingLeft(pod, 'vol-gone');
  });
});
