/**
 * --runonce (part of nodeagent's composition root): builds the node's modules, runs the pods of
 * the manifest path and URL sources once (src/agent/runonce), prints each pod's state, and
 * exits 0 when every pod runs or succeeded and 1 otherwise.
 */
import { availableParallelism } from 'node:os';
import type { Clock } from '../api/clock.js';
import type { ResolvedConfiguration } from '../agent/config/index.js';
import type { LogRoot } from '../agent/logging/index.js';
import { runPodsOnce } from '../agent/runonce/index.js';
import { podCapacity } from '../agent/syncloop/index.js';
import { buildNode, nodeIdentity } from './agent-node.js';

export async function runOnce(resolved: ResolvedConfiguration, logs: LogRoot, clock: Clock): Promise<number> {
  const c = resolved.config;
  const log = logs.logger('runonce');
  if (c.staticPodPath === '' && c.staticPodURL === '') {
    log.error('--runonce needs a manifest path (--pod-manifest-path) or a URL (--manifest-url)');
    return 1;
  }
  // Every pod of the first snapshot stays wanted: a pod that completed keeps its containers.
  const node = await buildNode(resolved, logs, { identity: await nodeIdentity(resolved), clock, desired: { isDesired: () => true, activePods: () => [] } });
  try {
    const results = await runPodsOnce({
      podConfig: node.podConfig, syncer: node.syncer, status: node.status, logger: log, clock,
      capacity: podCapacity(c.maxPods, c.podsPerCore, availableParallelism()),
    });
    if (results === undefined) {
      log.error('The pod sources gave no pods in 30s (a manifest that does not parse?)');
      return 1;
    }
    for (const r of results) process.stdout.write(`${r.line}\n`);
    const failed = results.filter((r) => !r.ok).length;
    log.info('runonce finished', { pods: results.length, failed });
    return failed === 0 ? 0 : 1;
  } finally {
    await node.prober.stop();
    node.cri.close();
  }
}
