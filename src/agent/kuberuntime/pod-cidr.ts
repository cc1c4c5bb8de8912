/**
 * The pod CIDR handed to the runtime (UpdateRuntimeConfig), as upstream's updatePodCIDR: in
 * API-server mode from the Node's spec.podCIDR each time the node status loop reads the Node,
 * called again only when the value changes (or the last hand-over failed). An empty CIDR is not
 * handed over (upstream keeps the runtime's).
 */
import { messageOf } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import type { RuntimeInfoService } from '../runtime/cri/index.js';

export interface PodCidrFollowerOptions {
  readonly runtime: Pick<RuntimeInfoService, 'updateRuntimeConfig'>;
  readonly logger: Pick<Logger, 'info' | 'warn'>;
}

/** Returns the function to call with each spec.podCIDR read; it never rejects (failures are logged and retried on the next call). */
export function podCidrFollower(options: PodCidrFollowerOptions): (podCIDR: string | undefined) => Promise<void> {
  let handed: string | undefined;
  let inFlight: Promise<void> | undefined;
  return async (podCIDR) => {
    if (podCIDR === undefined || podCIDR === '' || podCIDR === handed || inFlight !== undefined) return;
    inFlight = (async () => {
      try {
        await options.runtime.updateRuntimeConfig({ networkConfig: { podCidr: podCIDR } });
        handed = podCIDR;
        options.logger.info('Pod CIDR handed to the runtime', { podCIDR });
      } catch (err) {
        options.logger.warn('Handing the pod CIDR to the runtime failed; retrying at the next node status update', { podCIDR, err: messageOf(err) });
      }
    })();
    try {
      await inFlight;
    } finally {
      inFlight = undefined;
    }
  };
}
