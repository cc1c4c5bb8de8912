/**
 * The runtime manager's bound of pods starting at once, so that many pods arriving together (a
 * node's 110 at start) do not all hit the runtime and its network plugins at the same time. A
 * pod holds its slot from its RunPodSandbox call until the runtime has started its first
 * container (not through that container's postStart hook, which may take long): its container
 * starts count against the bound as its sandbox does, so the runtime has about as many pods in
 * flight as the bound says. (Bounding the RunPodSandbox calls alone let the starts of the pods
 * past their sandbox pile on top: in one interleaved comparison with CNI networking, 3 rounds
 * of 110 pods at once, 18.9 s on average against 15.0 s with the slot held to the first start,
 * the raw CRI calls at their best 14.8 s. How far the agent stays from the raw calls still
 * varies from run to run: see the README's performance table.) The semaphore itself is
 * src/api/semaphore.ts.
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
