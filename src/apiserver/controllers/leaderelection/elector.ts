/**
 * Leader election on a coordination.orch.io Lease, as client-go's leaderelection with a
 * LeaseLock: candidates try every retryPeriod (jittered up to 1.2x) to acquire the Lease, which
 * they may take when it is absent, free (no holder) or not renewed within leaseDuration of the
 * moment this candidate last saw its record change (the local clock, never the holder's times,
 * so that clock skew between replicas does not matter). The leader renews every retryPeriod and
 * steps down when no renewal succeeded for renewDeadline. Writes carry the Lease's
 * resourceVersion, so two candidates never both win. close() releases a held Lease (holder
 * cleared, leaseDurationSeconds 1) so another replica takes over at once.
 */
import type { Clock, Timer } from '../../../api/clock.js';
import { isAlreadyExists, isConflict, isNotFound, messageOf } from '../../../api/errors.js';
import { formatMicroTime } from '../../../api/time.js';
import { cloneJson } from '../../patch/index.js';
import { metaOf, resourceVersionOf, str } from '../../registry/index.js';
import { num, rec } from '../../resources/common/index.js';
import type { Log, ResourceClient, WireObject } from '../client/index.js';

/** Upstream's JitterFactor of the retry period. */
const JITTER = 1.2;

export interface LeaderElectionConfig {
  readonly namespace: string;
  readonly name: string;
  /** This candidate's holderIdentity (upstream: `<hostname>_<uuid>`). */
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

export interface LeaderCallbacks {
  /** Became the leader: start the loops. */
  onStartedLeading(): void;
  /** Lost (or gave up) the lead: stop the loops. */
  onStoppedLeading(): void;
  /** The holder seen changed (this candidate or another). */
  onNewLeader?(identity: string): void;
}

export interface LeaderElectorOptions {
  /** The leases client (coordination.orch.io/v1). */
  readonly leases: ResourceClient;
  readonly config: LeaderElectionConfig;
  readonly callbacks: LeaderCallbacks;
  readonly clock: Clock;
  readonly log: Log;
  /** [0, 1): the jitter of each wait (default Math.random). */
  readonly random?: () => number;
}

export class LeaderElector {
  private readonly options: LeaderElectorOptions;
  private observed: string | undefined;
  private observedAt = 0;
  private lastRenew = 0;
  private leading = false;
  private holder = '';
  private timer: Timer | undefined;
  private closed = false;
  private running: Promise<void> = Promise.resolve();

  constructor(options: LeaderElectorOptions) {
    this.options = options;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Starts trying to acquire (the first attempt at once). */
  start(): void {
    this.schedule(0);
  }

  /** Stops; a leader steps down (onStoppedLeading) and releases the Lease. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.timer?.cancel();
    await this.running;
    if (!this.leading) return;
    this.stepDown();
    try {
      await this.release();
    } catch (err) {
      this.options.log(`leader election: releasing the lease ${this.leaseName()} failed (it expires on its own): ${messageOf(err)}`);
    }
  }

  private leaseName(): string {
    return `${this.options.config.namespace}/${this.options.config.name}`;
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    this.timer = this.options.clock.setTimer(delayMs, () => {
      this.running = this.attempt();
    });
  }

  private jittered(): number {
    const { retryPeriodMs } = this.options.config;
    return retryPeriodMs + retryPeriodMs * (JITTER - 1) * (this.options.random ?? Math.random)();
  }

  private async attempt(): Promise<void> {
    let ok = false;
    try {
      ok = await this.tryAcquireOrRenew();
    } catch (err) {
      this.options.log(`leader election: ${this.leading ? 'renewing' : 'acquiring'} the lease ${this.leaseName()} failed: ${messageOf(err)}`);
    }
    if (this.closed) {
      // Acquired while closing: give it back rather than leave it to expire.
      if (ok && !this.leading) await this.release().catch((err: unknown) => { this.options.log(`leader election: releasing the lease ${this.leaseName()} failed: ${messageOf(err)}`); });
      return;
    }
    const now = this.options.clock.now();
    if (ok) {
      this.lastRenew = now;
      if (!this.leading) {
        this.leading = true;
        this.options.log(`leader election: ${this.options.config.identity} acquired the lease ${this.leaseName()}`);
        this.options.callbacks.onStartedLeading();
      }
      this.schedule(this.options.config.retryPeriodMs);
      return;
    }
    if (this.leading && now - this.lastRenew >= this.options.config.renewDeadlineMs) {
      this.options.log(`leader election: lost the lease ${this.leaseName()} (not renewed within ${this.options.config.renewDeadlineMs} ms)`);
      this.stepDown();
    }
    this.schedule(this.leading ? this.options.config.retryPeriodMs : this.jittered());
  }

  private stepDown(): void {
    if (!this.leading) return;
    this.leading = false;
    this.options.callbacks.onStoppedLeading();
  }

  private observe(lease: WireObject): void {
    const record = JSON.stringify(rec(lease.spec));
    if (record !== this.observed) {
      this.observed = record;
      this.observedAt = this.options.clock.now();
    }
    const holder = str(rec(lease.spec).holderIdentity);
    if (holder !== this.holder) {
      this.holder = holder;
      if (holder !== '') this.options.callbacks.onNewLeader?.(holder);
    }
  }

  /** One attempt (upstream tryAcquireOrRenew); true when this candidate holds the Lease after it. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { leases, clock, config } = this.options;
    const now = clock.now();
    const durationSeconds = Math.max(1, Math.round(config.leaseDurationMs / 1000));
    let lease: WireObject;
    try {
      lease = await leases.get(config.namespace, config.name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      const spec = { holderIdentity: config.identity, leaseDurationSeconds: durationSeconds, acquireTime: formatMicroTime(now), renewTime: formatMicroTime(now), leaseTransitions: 0 };
      try {
        const created = await leases.create(config.namespace, { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: config.name, namespace: config.namespace }, spec });
        this.observe(created);
        return true;
      } catch (createErr) {
        if (isAlreadyExists(createErr)) return false;
        throw createErr;
      }
    }
    this.observe(lease);
    const spec = rec(lease.spec);
    const holder = str(spec.holderIdentity);
    const mine = holder === config.identity;
    if (holder !== '' && !mine && this.observedAt + config.leaseDurationMs > now) return false;
    const transitions = num(spec.leaseTransitions) ?? 0;
    const next = cloneJson(lease);
    next.spec = {
      ...spec,
      holderIdentity: config.identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: mine ? (spec.acquireTime ?? formatMicroTime(now)) : formatMicroTime(now),
      renewTime: formatMicroTime(now),
      leaseTransitions: mine ? transitions : transitions + 1,
    };
    metaOf(next).resourceVersion = resourceVersionOf(lease);
    try {
      this.observe(await leases.update(config.namespace, config.name, next));
      return true;
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return false;
      throw err;
    }
  }

  /** Gives the Lease up (upstream's ReleaseOnCancel): no holder, a one-second duration. */
  private async release(): Promise<void> {
    const { leases, clock, config } = this.options;
    const lease = await leases.get(config.namespace, config.name);
    const spec = rec(lease.spec);
    if (str(spec.holderIdentity) !== config.identity) return;
    const now = formatMicroTime(clock.now());
    const next = cloneJson(lease);
    const { holderIdentity: _holder, ...rest } = spec;
    next.spec = { ...rest, leaseDurationSeconds: 1, acquireTime: now, renewTime: now };
    metaOf(next).resourceVersion = resourceVersionOf(lease);
    await leases.update(config.namespace, config.name, next);
    this.options.log(`leader election: released the lease ${this.leaseName()}`);
  }
}
