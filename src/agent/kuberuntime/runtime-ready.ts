/**
 * The wait for the container runtime at start: the agent builds nothing that needs the runtime
 * until it answers Version, retrying with a doubling pause (200 ms up to 5 s) and logging once
 * per change of reason, as upstream's kubelet waits for its runtime.
 */
import { sleepKeepingAlive, type Clock } from '../../api/clock.js';
import { messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import type { RuntimeInfoService } from '../runtime/cri/index.js';

export interface WaitForRuntimeOptions {
  /** --container-runtime-endpoint, for the log lines. */
  readonly endpoint: string;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Ends the wait (it then rejects). */
  readonly signal?: AbortSignal;
}

/** Resolves once the runtime answers Version; rejects only when `signal` aborts the wait. */
export async function waitForRuntime(runtime: Pick<RuntimeInfoService, 'version'>, options: WaitForRuntimeOptions): Promise<void> {
  const { endpoint, logger: log, clock, signal } = options;
  let last = '';
  for (let attempt = 0; ; attempt++) {
    try {
      const v = await runtime.version('v1');
      log.info('Container runtime ready', { endpoint, runtime: `${v.runtimeName} ${v.runtimeVersion}`, criVersion: v.runtimeApiVersion });
      return;
    } catch (err) {
      const reason = messageOf(err);
      if (reason !== last) log.error('Container runtime not ready; retrying', { endpoint, err: reason });
      last = reason;
    }
    if (signal?.aborted === true) throw new Error('stopped while waiting for the container runtime');
    // Kept alive: nothing else holds the process while the agent waits for its runtime.
    await sleepKeepingAlive(clock, Math.min(5000, 200 * 2 ** Math.min(attempt, 5)), signal);
  }
}
