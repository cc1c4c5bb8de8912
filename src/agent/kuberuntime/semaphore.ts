/**
 * The runtime manager's bound of pods starting at once, so that many pods arriving together (a
 * node's 110 at start) do not all hit the runtime and its network plugins at the same time. A
 * pod holds its slot from its RunPodSandbox call until the runtime has started its first
 * container (not through that container's postStart hook, which may take long): its container
 * starts count against the bound as its sandbox does, so the runtime has about as many pods in
 * flight as the bound says. (Bounding the RunPodSandbox calls alone let the starts of the pods
 * past their sandbox pile on top: measured with CNI networking, 110 pods at once took 1.28×
 * the raw CRI calls' time against 1.02× with the slot held to the first start.) The semaphore
 * itself is src/api/semaphore.ts.
 */
import os from 'node:os';

/**
 * The default bound of pods starting at once: four per CPU the process may use (on 2 cores, 8
 * pods in flight made 110 raw pods about as fast as 4, and faster than 2: bench/agent-pods.ts (c)).
 */
export function defaultPodStartConcurrency(): number {
  return 4 * os.availableParallelism();
}

export { Semaphore } from '../../api/semaphore.js';
