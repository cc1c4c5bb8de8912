/**
 * Whether the runtime's pod network is ready (its NetworkReady condition), as upstream's
 * runtimeState.networkErrors reads it before a pod sync: read from the runtime's Status at most
 * once per `maxAgeMs` (upstream refreshes it every 5 s) and only when asked, so an idle agent
 * makes no call for it. A Status call that fails says nothing about the network (the sync's own
 * runtime calls fail then).
 */
import type { Clock } from '../../api/clock.js';
import type { RuntimeInfoService } from '../runtime/cri/index.js';

export interface RuntimeNetworkStateOptions {
  readonly runtime: Pick<RuntimeInfoService, 'status'>;
  readonly clock: Pick<Clock, 'now'>;
  /** How long a reading holds, default 5 s. */
  readonly maxAgeMs?: number;
}

export interface RuntimeNetworkState {
  /** Undefined when the network is ready (or unknown); else why not, in upstream's words. */
  networkError(): Promise<string | undefined>;
}

export function runtimeNetworkState(options: RuntimeNetworkStateOptions): RuntimeNetworkState {
  const maxAgeMs = options.maxAgeMs ?? 5_000;
  let last: { at: number; error: string | undefined } | undefined;
  let reading: Promise<string | undefined> | undefined;
  const read = async (): Promise<string | undefined> => {
    try {
      const status = await options.runtime.status();
      const network = status.status?.conditions.find((c) => c.type === 'NetworkReady');
      const error = network === undefined || network.status ? undefined
        : `container runtime network not ready: NetworkReady=false reason:${network.reason} message:${network.message}`;
      last = { at: options.clock.now(), error };
      return error;
    } catch {
      return last?.error; // unknown: the last reading stands (the sync's own calls report the runtime)
    }
  };
  return {
    networkError() {
      if (last !== undefined && options.clock.now() - last.at < maxAgeMs) return Promise.resolve(last.error);
      reading ??= read().finally(() => { reading = undefined; });
      return reading;
    },
  };
}
