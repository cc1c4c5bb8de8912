/**
 * One sync of one pod as the runtime manager carries it out (manager.ts): the pod, its runtime
 * status and the actions computed for it, and what the sync's steps gather on the way (the
 * errors, the back-offs' times left, the sandbox and containers it made).
 */
import type { NodePod } from '../../api/pod/index.js';
import type { Logger } from '../logging/index.js';
import type { PodActions } from './compute-actions.js';
import { formatPod } from './container-config.js';
import { isRuntimeUnreachable } from './errors.js';
import type { StartResult } from './start-container.js';
import type { KnownSandbox } from './status.js';
import type { PodSyncResult, RuntimePodStatus, SyncError } from './types.js';

/** A sync's outcome, and the sandbox and containers it made when it made a sandbox. */
export interface AppliedActions extends PodSyncResult {
  readonly made?: { readonly sandbox: KnownSandbox; readonly containerIds: readonly string[] };
}

/** One sync of one pod: what it carries out, and what its steps gather (errors, back-offs' times left, what it made). */
export class SyncRun {
  readonly errors: SyncError[] = [];
  made: { sandbox: KnownSandbox; readonly containerIds: string[] } | undefined;
  private readonly retries: number[] = [];

  constructor(
    readonly pod: NodePod,
    readonly status: RuntimePodStatus,
    readonly actions: PodActions,
    private readonly logger: Logger,
  ) {}

  /** A step's failure, logged and kept; an unreachable runtime rejects the sync instead. */
  fail(err: unknown, error: SyncError): void {
    if (isRuntimeUnreachable(err)) throw err;
    this.logger.warn('pod sync step failed', { pod: formatPod(this.pod), reason: error.reason, container: error.container, err: error.message });
    this.errors.push(error);
  }

  /** A container start's outcome. */
  record(r: StartResult): void {
    if (r.error !== undefined) this.errors.push(r.error);
    if (r.retryAfterMs !== undefined) this.retries.push(r.retryAfterMs);
    if (r.id !== undefined) this.made?.containerIds.push(r.id);
  }

  result(): AppliedActions {
    const { errors, retries, made } = this;
    return { errors, ...(retries.length === 0 ? {} : { requeueAfterMs: Math.min(...retries) }), ...(made === undefined ? {} : { made }) };
  }
}
