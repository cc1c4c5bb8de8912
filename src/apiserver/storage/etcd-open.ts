/**
 * The door to the etcd store that loads it on first use: its client library (etcd3, with gRPC
 * and protobuf) takes about half a second of CPU to load, which a server on SQLite, and every
 * unit test that reaches the store's index, would otherwise pay at start for nothing.
 */
import type { EtcdStoreOptions } from './etcd-store.js';
import type { ManagedStore } from './types.js';

/** Opens the store on etcd (etcd-store.ts); the same contract, loading the etcd client first. */
export async function openEtcdStore(options: EtcdStoreOptions): Promise<ManagedStore> {
  const { openEtcdStore: open } = await import('./etcd-store.js');
  return open(options);
}
