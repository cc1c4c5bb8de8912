/**
 * The runtime manager's bound of pods starting at once (`PodStartSlots`), so that many pods
 * arriving together (a node's 110 at start) do not all hit the runtime and its network plugins
 * at the same time. A pod holds its slot from its RunPodSandbox call until the runtime has
 * started its first container (not through that container's postStart hook, nor once one of
 * its images is being pulled: both may take long). Its container
 * starts count against the bound as its sandbox does, so the runtime has about as many pods in
 * flight as the bound says, where bounding the RunPodSandbox calls alone lets the starts of the
 * pods past their sandbox pile on top. The semaphore itself is src/api/semaphore.ts.
 */
import os from 'node:os';
import { Semaphore } from '../../api/semaphore.js';

/** The default bound of pods starting at once: four per CPU the process may use. */
export function defaultPodStartConcurrency(): number {
  return 4 * os.availableParallelism();
}

/** One pod's start slot: not held until `hold()`; `release` gives it back once (and nothing before `hold()`). */
export interface PodStartSlot {
  /** Waits for a free slot and holds it. */
  hold(): Promise<void>;
  /** Gives the slot back; a function of its own, to be handed on as a callback. */
  readonly release: () => void;
}

/**
 * The agent-wide start slots: without them 110 CNI pods at once took 1.27–1.37× the raw calls'
 * time against 0.90–1.50× (median 1.15×) with them, in the same rounds (bench/pods.ts, two builds).
 */
export class PodStartSlots {
  private readonly slots: Semaphore;

  /** `limit`: pods starting at once at most (default: four per CPU; 0: no bound). */
  constructor(options: { readonly limit?: number | undefined }) {
    this.slots = new Semaphore(options.limit ?? defaultPodStartConcurrency());
  }

  /** A slot for one pod's sync, not yet held. */
  slot(): PodStartSlot {
    let giveBack: (() => void) | undefined;
    return {
      hold: async () => {
        giveBack = await this.slots.hold();
      },
      release: () => {
        giveBack?.();
      },
    };
  }
}

export { Semaphore };
