/** Start-up checks of the server process. */
import { setTimeout as delay } from 'node:timers/promises';
import { messageOf, OrchError } from '../../api/errors.js';
import type { ManagedStore } from '../storage/index.js';

/**
 * Resolves once the store answers (etcd may still be starting); throws OrchError
 * APISERVER_STORAGE_UNREACHABLE with the last error after `timeoutMs`.
 */
export async function waitForStore(store: ManagedStore, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await store.currentRevision();
      return;
    } catch (err) {
      if (Date.now() >= deadline) {
        throw new OrchError('APISERVER_STORAGE_UNREACHABLE', 'unavailable', `the storage did not answer within ${timeoutMs} ms: ${messageOf(err)}`, { subject: 'storage', cause: err });
      }
      await delay(200);
    }
  }
}
