/**
 * The runtime manager's bound of concurrent RunPodSandbox calls, so that many pods arriving
 * together (a node's 110 at start) do not all hit the runtime and its network plugins at the
 * same time. The semaphore itself is src/api/semaphore.ts.
 */
import os from 'node:os';

/**
 * The default bound of concurrent RunPodSandbox calls: four per CPU the process may use (on 2
 * cores, 8 in flight made 110 raw sandboxes fastest of 2, 4 and 8: bench/agent-pods.ts (c)).
 */
export function defaultSandboxConcurrency(): number {
  return 4 * os.availableParallelism();
}

export { Semaphore } from '../../api/semaphore.js';
