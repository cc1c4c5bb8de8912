/**
 * A RestClient whose connection can be replaced while it is in use: after a client certificate
 * rotation the agent swaps in a client of the new connection. Calls after the swap go to the
 * new client; the old one is closed a grace period later, so that watches open on it end there
 * and are resumed on the new one by their reflectors.
 */
import type { Clock } from '../../api/clock.js';
import type { RestClient } from './rest-types.js';

/** How long the replaced client stays open for the calls and watches under way on it. */
export const SWAP_GRACE_MS = 30_000;

export interface SwappableRestClient {
  readonly rest: RestClient;
  /** Sends later calls to `next`; closes the replaced client after SWAP_GRACE_MS. */
  swap(next: RestClient): void;
}

export function swappableRestClient(first: RestClient, clock: Clock): SwappableRestClient {
  let inner = first;
  const rest: RestClient = {
    get: (p, o) => inner.get(p, o),
    list: (p, o) => inner.list(p, o),
    create: (p, b, o) => inner.create(p, b, o),
    update: (p, b, o) => inner.update(p, b, o),
    patch: (p, t, b, o) => inner.patch(p, t, b, o),
    delete: (p, b, o) => inner.delete(p, b, o),
    watch: (p, f, o) => inner.watch(p, f, o),
    close: () => { inner.close(); },
  };
  return {
    rest,
    swap(next) {
      const old = inner;
      inner = next;
      clock.setTimer(SWAP_GRACE_MS, () => { old.close(); });
    },
  };
}
