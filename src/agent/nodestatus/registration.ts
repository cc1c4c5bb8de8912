/**
 * Registration with the API server (upstream: registerWithAPIServer / tryRegisterWithAPIServer):
 * POST the Node; when it already exists, GET it and bring the agent-owned metadata in line
 * (default labels, the attach/detach annotation) with a merge patch, leaving everything else —
 * taints included — as the cluster has it. Retries with a doubling back-off (100 ms to 7 s) until
 * it succeeds or is aborted.
 */
import type { Clock } from '../../api/clock.js';
import { isAlreadyExists, messageOf } from '../../api/errors.js';
import type { RestClient } from '../orchclient/index.js';
import { Backoff } from './backoff.js';
import { reconcilePatch } from './node-object.js';
import type { NodeStatusLogger, WireNode } from './types.js';

export const NODES_PATH = '/api/v1/nodes';
export const REGISTRATION_BACKOFF_INITIAL_MS = 100;
export const REGISTRATION_BACKOFF_MAX_MS = 7_000;

export const nodePath = (name: string): string => `${NODES_PATH}/${encodeURIComponent(name)}`;
export const nodeStatusPath = (name: string): string => `${nodePath(name)}/status`;

export interface RegistrationOptions {
  readonly client: RestClient;
  readonly clock: Clock;
  readonly logger: NodeStatusLogger;
  readonly signal: AbortSignal;
  /** The Node to create (built again for every attempt, so that its status is fresh). */
  readonly build: () => Promise<WireNode>;
}

export interface Registered {
  /** The Node as the server returned it. */
  readonly node: WireNode;
  /** True when this agent created it, false when it existed. */
  readonly created: boolean;
}

/** One attempt; undefined (and a log line) when it failed. */
export async function tryRegister(options: Omit<RegistrationOptions, 'clock'>): Promise<Registered | undefined> {
  const { client, logger, signal } = options;
  const node = await options.build();
  const name = node.metadata?.name ?? '';
  try {
    const created = await client.create<WireNode>(NODES_PATH, node, { signal });
    logger.info('Successfully registered node', { node: name });
    return { node: created, created: true };
  } catch (err) {
    if (!isAlreadyExists(err)) {
      logger.error('Unable to register node with API server', { node: name, err: messageOf(err) });
      return undefined;
    }
  }
  let existing: WireNode;
  try {
    existing = await client.get<WireNode>(nodePath(name), { signal });
  } catch (err) {
    logger.error('Unable to register node with API server, error getting existing node', { node: name, err: messageOf(err) });
    return undefined;
  }
  const patch = reconcilePatch(node, existing);
  if (patch !== undefined) {
    try {
      existing = await client.patch<WireNode>(nodePath(name), 'merge', patch, { signal });
    } catch (err) {
      logger.error('Unable to reconcile node with API server, error updating node', { node: name, err: messageOf(err) });
      return undefined;
    }
  }
  logger.info('Node was previously registered', { node: name });
  return { node: existing, created: false };
}

/** Registers, retrying with back-off; undefined when aborted first. Never throws. */
export async function registerWithApiServer(options: RegistrationOptions): Promise<Registered | undefined> {
  const backoff = new Backoff(REGISTRATION_BACKOFF_INITIAL_MS, REGISTRATION_BACKOFF_MAX_MS);
  while (!options.signal.aborted) {
    let result: Registered | undefined;
    try {
      result = await tryRegister(options);
    } catch (err) {
      options.logger.error('Unable to register node with API server', { err: messageOf(err) });
    }
    if (result !== undefined) return result;
    await options.clock.sleep(backoff.next(), options.signal);
  }
  return undefined;
}
