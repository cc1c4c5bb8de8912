/**
 * The types shared by the pod sources and the pod config merger.
 */
import type { NodePod } from '../../api/pod/index.js';

import type { Logger } from '../logging/index.js';

/** The part of the agent's Logger that sources use. */
export type SourceLogger = Pick<Logger, 'info' | 'warn' | 'error'>;

/**
 * What changed for the pods of one source, by UID:
 * | op        | meaning                                                                      |
 * |-----------|------------------------------------------------------------------------------|
 * | ADD       | new UIDs (also an empty ADD on a source's first snapshot without adds)       |
 * | UPDATE    | same UID; spec, labels, annotations (but the agent's own) or deletion changed |
 * | REMOVE    | the UID is no longer in the source                                          |
 * | RECONCILE | same UID; only the status changed                                            |
 */
export type PodOperation = 'ADD' | 'UPDATE' | 'REMOVE' | 'RECONCILE';

export interface PodUpdate {
  readonly op: PodOperation;
  /** `file`, `http`, `api`, or another name declared to the merger. */
  readonly source: string;
  /** The pods concerned; listeners must treat them as read-only (they are shared). */
  readonly pods: readonly NodePod[];
}

export type PodUpdateListener = (update: PodUpdate) => void;

/** Receives a source's full set of pods (SET semantics: a pod left out is gone). */
export type SnapshotSink = (pods: readonly NodePod[]) => void;

/** A source that polls or watches on its own: started and stopped by the pod config. */
export interface PodSource {
  /** Starts watching; resolves after the first snapshot was delivered (or the first attempt failed). Call once. */
  start(): Promise<void>;
  /** Stops every timer, watcher and request; no snapshot is delivered afterwards. Idempotent. */
  stop(): Promise<void>;
}
