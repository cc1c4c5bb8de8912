/**
 * --runonce (part of nodeagent's composition root): take the pods of the manifest path and
 * URL sources once, start them, wait until each runs (or fails, or gives up after upstream's
 * retries), print their status, exit 0 when every pod runs or succeeded and 1 otherwise. The
 * containers keep running after the agent exits, as upstream's.
 */
import { availableParallelism } from 'node:os';
import type { Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import { sleepKeepingAlive, type Clock } from '../api/clock.js';
import { messageOf } from '../api/errors.js';
import { podFullName, type NodePod } from '../api/pod/index.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import type { LogRoot } from '../agent/logging/index.js';
import { podCapacity } from '../agent/syncloop/index.js';
import { buildNode, nodeIdentity } from './agent-node.js';

/** Upstream: 10 attempts, the delay doubling from 1 s. */
const MAX_ATTEMPTS = 10;
const FIRST_DELAY_MS = 1000;

function settled(status: PodStatus | undefined): boolean {
  if (status === undefined) return false;
  if (status.phase === 'Succeeded' || status.phase === 'Failed') return true;
  return status.phase === 'Running' && (status.containerStatuses ?? []).every((s) => s.state?.running !== undefined);
}

function describe(pod: Pod, status: PodStatus | undefined): string {
  const containers = (status?.containerStatuses ?? [])
    .map((s) => `${s.name}=${s.state?.running !== undefined ? 'running' : s.state?.terminated !== undefined ? `terminated(${s.state.terminated.exitCode})` : `waiting(${s.state?.waiting?.reason ?? ''})`}`)
    .join(' ');
  return `pod "${podFullName(pod)}": ${status?.phase ?? 'Unknown'}${status?.reason === undefined ? '' : ` (${status.reason}: ${status.message ?? ''})`} ${containers}`;
}

/** Waits until every configured source delivered its first snapshot; returns the pods. */
async function firstSnapshot(node: Awaited<ReturnType<typeof buildNode>>, clock: Clock, timeoutMs: number): Promise<NodePod[]> {
  const pods = new Map<string, NodePod>();
  const unsubscribe = node.podConfig.subscribe((u) => {
    for (const p of u.pods) {
      if (u.op === 'REMOVE') pods.delete(p.metadata.uid);
      else pods.set(p.metadata.uid, p);
    }
  });
  await node.podConfig.start();
  const deadline = clock.now() + timeoutMs;
  while (!node.podConfig.sourcesReady() && clock.now() < deadline) await sleepKeepingAlive(clock, 50);
  unsubscribe();
  await node.podConfig.stop();
  return [...pods.values()];
}

export async function runOnce(resolved: ResolvedConfiguration, logs: LogRoot, clock: Clock): Promise<number> {
  const c = resolved.config;
  const log = logs.logger('runonce');
  if (c.staticPodPath === '' && c.staticPodURL === '') {
    log.error('--runonce needs a manifest path (--pod-manifest-path) or a URL (--manifest-url)');
    return 1;
  }
  // Every pod of the first snapshot stays wanted: a pod that completed keeps its containers.
  const node = await buildNode(resolved, logs, { identity: await nodeIdentity(resolved), clock, desired: { isDesired: () => true } });
  try {
    const pods = await firstSnapshot(node, clock, 30_000);
    if (!node.podConfig.sourcesReady()) {
      log.error('The pod sources gave no pods in 30s (a manifest that does not parse?)');
      return 1;
    }
    const capacity = podCapacity(c.maxPods, c.podsPerCore, availableParallelism());
    const results = await Promise.all(pods.map(async (pod, i) => {
      const uid = pod.metadata.uid;
      if (i >= capacity) {
        return { pod, ok: false, line: `pod "${podFullName(pod)}": rejected (OutOfpods: capacity ${capacity})` };
      }
      let wait = FIRST_DELAY_MS;
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        try {
          await node.syncer.syncPod(pod, attempt === 1 ? 'create' : 'sync');
        } catch (err) {
          log.warn('Pod sync failed', { pod: pod.metadata.name, attempt, err: messageOf(err) });
        }
        if (settled(node.status.getPodStatus(uid))) break;
        await sleepKeepingAlive(clock, wait);
        wait *= 2;
      }
      const status = node.status.getPodStatus(uid);
      const ok = status?.phase === 'Succeeded' || (status?.phase === 'Running' && settled(status));
      return { pod, ok, line: describe(pod, status) };
    }));
    for (const r of results) process.stdout.write(`${r.line}\n`);
    const failed = results.filter((r) => !r.ok).length;
    log.info('runonce finished', { pods: results.length, failed });
    return failed === 0 ? 0 : 1;
  } finally {
    await node.prober.stop();
    node.cri.close();
  }
}
