/**
 * What the control loops read and write through: one ResourceClient per resource (pods, nodes,
 * leases, events), implemented over the registry (registry-client.ts) and, in unit tests, by an
 * in-memory fake (testing.ts). Errors are the registry's StatusErrors; tell them apart by
 * category (isNotFound, isConflict, isAlreadyExists from src/api/errors.ts).
 */
import type { ObjectEvent, WireObject } from '../../registry/index.js';

export type { ObjectEvent, WireObject };

export interface ObjectList {
  readonly items: readonly WireObject[];
  /** The revision the list was read at: watch from it. */
  readonly resourceVersion: string;
}

export interface ClientWatch {
  /** Stops delivery; resolves when no event will be delivered any more. */
  close(): Promise<void>;
}

export interface DeleteOptions {
  /** 0 removes a pod at once (force); absent: the pod's own grace period. */
  readonly gracePeriodSeconds?: number;
  /** Precondition: delete only this incarnation of the object. */
  readonly uid?: string;
}

export interface ResourceClient {
  /** Every object in the client's scope (its namespace, or all). */
  list(): Promise<ObjectList>;
  /** Changes after `resourceVersion`, in order; an ERROR event ends the watch (list again). */
  watch(resourceVersion: string, onEvent: (event: ObjectEvent) => void): Promise<ClientWatch>;
  get(namespace: string, name: string): Promise<WireObject>;
  create(namespace: string, object: WireObject): Promise<WireObject>;
  /** A PUT with the object's resourceVersion as precondition (409 when it changed); `status` writes only the status. */
  update(namespace: string, name: string, object: WireObject, subresource?: 'status'): Promise<WireObject>;
  delete(namespace: string, name: string, options?: DeleteOptions): Promise<void>;
}

/** The message lines of a control loop. */
export type Log = (message: string) => void;
