/**
 * The evented PLEG (EventedPLEG gate) on a real containerd: a container's exit reaches the pod's
 * status through containerd's task events, far sooner than the 300 s safety-net relist; with
 * containerd restarted under the agent, the PLEG relists every second while the event stream is
 * down, subscribes again once containerd is back, and the relist made then finds the exit that
 * happened while nothing was listening. Pod statuses are read from the agent's read-only /pods.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { startContainerdDaemon, stopContainerdDaemon } from '../helpers/faults.js';
import { NODE, podManifest, writeManifest } from '../helpers/pods.js';
import { waitFor } from '../helpers/wait.js';

let containerd: ContainerdInstance;
let manifests: string;
let triggers: string;
let agent: AgentProcess | undefined;
let readOnlyPort: number;

interface ContainerStatusLite {
  readonly state?: { readonly running?: object; readonly terminated?: { readonly exitCode: number } };
}

/** The main container's status of static pod `name` as the agent's /pods shows it. */
async function mainStatus(name: string): Promise<ContainerStatusLite | undefined> {
  const res = await fetch(`http://127.0.0.1:${readOnlyPort}/pods`);
  const list = (await res.json()) as { items: { metadata: { name: string }; status?: { containerStatuses?: (ContainerStatusLite & { name: string })[] } }[] };
  return list.items.find((p) => p.metadata.name === `${name}-${NODE}`)?.status?.containerStatuses?.find((c) => c.name === 'main');
}

/** A pod whose container runs until the test creates its trigger file, then exits with 3. */
async function triggeredPod(name: string): Promise<void> {
  await writeManifest(manifests, `${name}.yaml`, podManifest({
    name, image: containerd.images.busybox, restartPolicy: 'Never',
    command: `while [ ! -f /trigger/${name} ]; do sleep 0.05; done; exit 3`,
    extraContainer: { volumeMounts: [{ name: 'trigger', mountPath: '/trigger' }] },
    extraSpec: { volumes: [{ name: 'trigger', hostPath: { path: triggers } }] },
  }));
  await waitFor(`${name} running`, async () => (await mainStatus(name))?.state?.running !== undefined, { timeoutMs: 60_000 });
}

/** Makes the pod's container exit and returns the ms until /pods shows it terminated. */
async function exitAndTime(name: string, timeoutMs: number): Promise<number> {
  const started = Date.now();
  await writeFile(join(triggers, name), '');
  const status = await waitFor(`${name} terminated in /pods`, async () => (await mainStatus(name))?.state?.terminated, { timeoutMs, intervalMs: 20 });
  assert.equal(status.exitCode, 3);
  return Date.now() - started;
}

before(async () => {
  containerd = await startContainerd();
  manifests = await mkdtemp(join(tmpdir(), 'nodeagent-manifests-'));
  triggers = await mkdtemp(join(tmpdir(), 'nodeagent-triggers-'));
  readOnlyPort = await freePort();
  agent = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests,
    args: [`--hostname-override=${NODE}`, '--feature-gates=EventedPLEG=true', `--read-only-port=${readOnlyPort}`],
  });
  await agent.waitForLog('The runtime\'s event stream is live', 30_000);
});

after(async () => {
  await agent?.stop();
  await containerd.stop();
  await rm(manifests, { recursive: true, force: true });
  await rm(triggers, { recursive: true, force: true });
});

void describe('the evented PLEG on containerd', () => {
  void it('shows a container\'s exit in the pod status from its event, far sooner than the 300 s relist', async () => {
    await triggeredPod('quick');
    const ms = await exitAndTime('quick', 10_000);
    process.stdout.write(`evented PLEG: exit -> /pods status in ${ms} ms\n`);
    assert.ok(ms < 5000, `${ms} ms`);
    assert.doesNotMatch(agent?.logs() ?? '', /event stream failed/);
  });

  void it('with containerd restarted under it, relists while the stream is down, and loses no exit: the one while down is found once it is back', async () => {
    await triggeredPod('during');
    await triggeredPod('later');
    await stopContainerdDaemon(containerd);
    await agent?.waitForLog('The runtime\'s event stream failed; the PLEG relists every second until it is back', 30_000);
    // The container exits while containerd is down: no event reaches the agent for it.
    await writeFile(join(triggers, 'during'), '');
    await startContainerdDaemon(containerd);
    await agent?.waitForLog('The runtime\'s event stream is live again', 60_000);
    const during = await waitFor('the exit while down in /pods', async () => (await mainStatus('during'))?.state?.terminated, { timeoutMs: 30_000, intervalMs: 100 });
    assert.equal(during.exitCode, 3);
    // Events flow again after the re-subscription.
    const ms = await exitAndTime('later', 10_000);
    process.stdout.write(`evented PLEG after a containerd restart: exit -> /pods status in ${ms} ms\n`);
    assert.ok(ms < 5000, `${ms} ms`);
  });
});
