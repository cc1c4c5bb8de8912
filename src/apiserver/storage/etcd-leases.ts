/**
 * Leases for objects with a time to live in the etcd store.
 *
 * `shared` (default): objects that expire in the same wall-clock second share one lease,
 * granted with a TTL that ends at (or just after) the end of that second. A key therefore
 * expires between its TTL and one second later, never earlier, and a stream of events with the
 * same TTL costs one LeaseGrant per second instead of one per object (each grant is a Raft
 * write; measured in bench/store.ts).
 * `per-object`: one lease per write, with exactly the requested TTL.
 *
 * Leases are never kept alive: they exist to expire. etcd's minimum TTL (a few seconds with the
 * default election timeout) still applies.
 */
import type { LeaseClient } from 'etcd3';

export type EtcdLeaseMode = 'shared' | 'per-object';

export interface LeasePoolOptions {
  readonly client: LeaseClient;
  readonly mode: EtcdLeaseMode;
  readonly now: () => number;
}

export class LeasePool {
  private readonly options: LeasePoolOptions;
  /** Lease ids by the epoch second they expire at. */
  private readonly bySecond = new Map<number, Promise<string>>();

  constructor(options: LeasePoolOptions) {
    this.options = options;
  }

  /** A lease that expires no earlier than `ttlSeconds` from now. Throws what LeaseGrant throws. */
  leaseFor(ttlSeconds: number): Promise<string> {
    if (this.options.mode === 'per-object') return this.grant(ttlSeconds);
    const now = this.options.now();
    this.prune(now);
    const second = Math.ceil((now + ttlSeconds * 1000) / 1000);
    let lease = this.bySecond.get(second);
    if (lease === undefined) {
      lease = this.grant(Math.max(1, Math.ceil((second * 1000 - now) / 1000)));
      this.bySecond.set(second, lease);
      lease.catch(() => {
        // The caller of leaseFor receives the same rejection; only forget the failed grant here.
        this.bySecond.delete(second);
      });
    }
    return lease;
  }

  /** Forgets a lease that etcd no longer knows (revoked, or expired early). */
  forget(id: string): void {
    for (const [second, lease] of this.bySecond) {
      void lease.then(
        (leaseId) => {
          if (leaseId === id && this.bySecond.get(second) === lease) this.bySecond.delete(second);
        },
        () => undefined,
      );
    }
  }

  private async grant(ttlSeconds: number): Promise<string> {
    const response = await this.options.client.leaseGrant({ TTL: ttlSeconds, ID: 0 });
    return response.ID;
  }

  /**
   * Drops the leases that have expired, oldest first, and stops at the first live one: with one
   * TTL the seconds are inserted in increasing order, so this is O(expired) per call, where a full
   * scan cost O(TTL in seconds) per write (86,400 entries with --event-ttl=24h). With mixed TTLs
   * an expired entry may wait behind a live one; that only costs memory, since lookups are always
   * for a second after now and never find it.
   */
  private prune(now: number): void {
    for (const second of this.bySecond.keys()) {
      if (second * 1000 > now) return;
      this.bySecond.delete(second);
    }
  }
}
