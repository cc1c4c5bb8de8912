/**
 * The one test that separates "the runtime cannot be
 * reached" (syncPod rejects, the pod worker retries) from every other CRI failure (a
 * SyncError in the result).
 */
import { OrchError } from '../../api/errors.js';

/** True for failures that mean the runtime cannot be reached (CRI_UNAVAILABLE, CRI_CLOSED). */
export function isRuntimeUnreachable(err: unknown): err is OrchError {
  return err instanceof OrchError && (err.category === 'unavailable' || err.code === 'CRI_CLOSED');
}
