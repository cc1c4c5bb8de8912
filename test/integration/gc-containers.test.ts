/**
 * Container garbage collection on a real containerd, with the real nodeagent binary and a GC
 * period of 1 s (NODEAGENT_CONTAINER_GC_PERIOD): a crash-looping container never keeps more
 * than one dead instance past a GC pass while `/containerLogs?previous=true` still answers from
 * it, the log files of the removed instances go with them, --maximum-dead-containers bounds
 * the node, and a deleted pod leaves no container, sandbox or log directory behind (nor does a
 * log directory of a pod this agent never had).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { connectCri, type Container, type CriClient } from '../../src/agent/runtime/cri/index.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { NODE, containersOf, podManifest, sandboxesOf, writeManifest } from '../helpers/pods.js';
import { httpsCall } from '../helpers/review-server.js';
import { waitFor } from '../helpers/wait.js';

/** A removal is due within one GC period (1 s) of the death that makes it due; this much more is allowed. */
const GC_SLACK_MS = 3000;

let containerd: ContainerdInstance;
let cri: CriClient;
let manifests: string;
let agent: AgentProcess | undefined;
let port: number;

async function startAgent(args: readonly string[]): Promise<AgentProcess> {
  port = await freePort();
  agent = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, manifestDir: manifests,
    args: [`--hostname-override=${NODE}`, `--port=${port}`, '--address=127.0.0.1', ...args],
    env: { NODEAGENT_CONTAINER_GC_PERIOD: '1s' },
  });
  return agent;
}

/** Each dead instance of the pod's containers with when it finished (ms). */
async function deadOf(pod: string): Promise<{ id: string; name: string; finishedAt: number; logPath: string }[]> {
  const dead: { id: string; name: string; finishedAt: number; logPath: string }[] = [];
  for (const c of (await containersOf(cri, pod)).filter((x) => x.state === 'CONTAINER_EXITED')) {
    const s = await cri.containerStatus({ containerId: c.id }).then((r) => r.status, () => null); // removed meanwhile
    if (s !== null) dead.push({ id: c.id, name: c.labels['io.orch.container.name'] ?? '', finishedAt: Number(BigInt(s.finishedAt) / 1_000_000n), logPath: s.logPath });
  }
  return dead;
}

/**
 * Samples the pod's dead containers every 200 ms for `ms` and returns the samples in which a
 * container holds more than `keep` dead instances although the newer ones died more than
 * GC_SLACK_MS earlier (what a GC pass should have removed by then).
 */
async function overdue(pod: string, keep: number, ms: number): Promise<string[]> {
  const problems: string[] = [];
  const end = Date.now() + ms;
  await waitFor(`${ms} ms of samples`, async () => {
    const now = Date.now();
    const dead = await deadOf(pod);
    for (const name of new Set(dead.map((d) => d.name))) {
      const mine = dead.filter((d) => d.name === name).sort((a, b) => b.finishedAt - a.finishedAt);
      const settled = mine[keep - 1];
      if (mine.length > keep && settled !== undefined && now - settled.finishedAt > GC_SLACK_MS) problems.push(`${name}: ${mine.length} dead at ${now}`);
    }
    return Date.now() >= end;
  }, { timeoutMs: ms + 20_000, intervalMs: 200 });
  return problems;
}

before(async () => {
  containerd = await startContainerd();
  cri = connectCri({ runtimeEndpoint: containerd.endpoint, requestTimeoutMs: 30_000 });
  manifests = await mkdtemp(join(tmpdir(), 'nodeagent-manifests-'));
});

after(async () => {
  await agent?.stop();
  cri.close();
  await containerd.stop();
  await rm(manifests, { recursive: true, force: true });
});

void describe('container garbage collection', () => {
  void it('keeps one dead instance of a crash-looping container, removing the older ones with their logs, and its previous log answers', async () => {
    const a = await startAgent(['--maximum-dead-containers-per-container=1']);
    const image = containerd.images.busybox;
    await writeManifest(manifests, 'crash.yaml', podManifest({ name: 'crash', image, hostNetwork: true, command: 'echo "attempt $RANDOM$RANDOM"; exit 1' }));
    // Attempts 0 and 1 at once, 2 after the 10 s back-off: by then 0 must have gone.
    const third = await waitFor('the third attempt', async () => (await containersOf(cri, 'crash')).find((c) => c.metadata?.attempt === 2), { timeoutMs: 40_000, intervalMs: 200 });
    assert.deepEqual(await overdue('crash', 1, 6000), []);
    const dead = await waitFor('one dead instance, the third attempt', async () => {
      const d = await deadOf('crash');
      return d.length === 1 && d[0]?.id === third.id ? d : undefined;
    }, { timeoutMs: GC_SLACK_MS + 2000, intervalMs: 100 });
    const uid = third.labels['io.orch.pod.uid'] ?? '';
    const dir = join(a.podLogsDir, `default_crash-${NODE}_${uid}`, 'main');
    assert.equal(dead[0]?.logPath, join(dir, '2.log'));
    const logs = (await readdir(dir)).sort();
    assert.ok(!logs.includes('0.log') && !logs.includes('1.log') && logs.includes('2.log'), `the removed attempts' logs are gone: ${logs.join(' ')}`);
    const previous = await httpsCall({ port, path: `/containerLogs/default/crash-${NODE}/main?previous=true` });
    assert.equal(previous.status, 200, previous.body);
    assert.match(previous.body, /^attempt \d+\n$/);
    const newest = (await deadOf('crash')).sort((x, y) => y.finishedAt - x.finishedAt)[0];
    assert.ok((await readFile(newest?.logPath ?? '', 'utf8')).endsWith(`stdout F ${previous.body.trim()}\n`), 'previous reads the newest dead instance');
  });

  void it('removes what a deleted pod left, and the log directory of a pod it never had', async () => {
    const a = agent;
    assert.ok(a !== undefined);
    const ghost = join(a.podLogsDir, 'default_ghost_0b7f3c1e-0000-4000-8000-00000000beef', 'main');
    await mkdir(ghost, { recursive: true });
    await writeFile(join(ghost, '0.log'), 'left by someone\n');
    const [sandbox] = await sandboxesOf(cri, 'crash');
    const uid = sandbox?.labels['io.orch.pod.uid'] ?? '';
    assert.notEqual(uid, '');
    await rm(join(manifests, 'crash.yaml'));
    const mine = { labelSelector: { 'io.orch.pod.uid': uid } };
    await waitFor('no container, sandbox or log directory of the pod', async () =>
      (await cri.listContainers(mine)).length === 0 && (await cri.listPodSandbox(mine)).length === 0 && !existsSync(join(a.podLogsDir, `default_crash-${NODE}_${uid}`)),
    { timeoutMs: 30_000, intervalMs: 200 });
    await waitFor('the stray log directory removed', () => !existsSync(join(a.podLogsDir, 'default_ghost_0b7f3c1e-0000-4000-8000-00000000beef')), { timeoutMs: 10_000 });
  });

  void it('bounds the dead containers of the node with --maximum-dead-containers', async () => {
    await agent?.stop();
    await startAgent(['--maximum-dead-containers-per-container=-1', '--maximum-dead-containers=2']);
    const image = containerd.images.busybox;
    await writeManifest(manifests, 'twins.yaml', stringify({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'twins' },
      spec: {
        hostNetwork: true, terminationGracePeriodSeconds: 2,
        containers: ['main', 'other'].map((name) => ({ name, image, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'exit 1'] })),
      },
    }));
    const third = (c: Container): boolean => (c.metadata?.attempt ?? 0) >= 2;
    await waitFor('the third attempt of both containers', async () => (await containersOf(cri, 'twins')).filter(third).length >= 2, { timeoutMs: 40_000, intervalMs: 200 });
    // Without a per-container limit each would keep every dead attempt; the node keeps 2 in all.
    assert.deepEqual(await overdue('twins', 1, 6000), []);
    const dead = await deadOf('twins');
    assert.ok(dead.length <= 2, `at most 2 dead containers on the node: ${dead.length}`);
    assert.deepEqual(new Set(dead.map((d) => d.name)), new Set(['main', 'other']), 'the newest dead attempt of each stays');
  });
});
