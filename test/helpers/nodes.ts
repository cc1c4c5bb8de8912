/**
 * Simulated nodes for tests of the cluster's control loops: a Node registered Ready with the
 * resources, labels and taints a test asks for, and its Lease in orch-node-lease renewed every
 * `renewEveryMs` as a node agent's heartbeat would be, until stop(). No agent runs its pods.
 */
import type { ApiClient } from './apiserver.js';

export interface SimulatedNodeOptions {
  readonly cpu?: string;
  readonly memory?: string;
  readonly pods?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints?: readonly Record<string, string>[];
  /** Default 1 s. */
  readonly renewEveryMs?: number;
  /** Seconds of the Lease (default 40, as an agent's). */
  readonly leaseDurationSeconds?: number;
}

export interface SimulatedNode {
  readonly name: string;
  /** Stops renewing the Lease (the node's "agent" stops). Idempotent. */
  stop(): void;
}

const micro = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export async function simulateNode(client: ApiClient, name: string, options: SimulatedNodeOptions = {}): Promise<SimulatedNode> {
  const resources = { cpu: options.cpu ?? '4', memory: options.memory ?? '8Gi', pods: options.pods ?? '110' };
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const node = await client.request('POST', '/api/v1/nodes', {
    body: {
      apiVersion: 'v1', kind: 'Node',
      metadata: { name, labels: { 'orch.io/hostname': name, ...options.labels } },
      spec: { ...(options.taints === undefined ? {} : { taints: options.taints }) },
      status: {
        capacity: resources, allocatable: resources,
        conditions: [{ type: 'Ready', status: 'True', reason: 'NodeagentReady', message: 'simulated', lastHeartbeatTime: now, lastTransitionTime: now }],
        addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
      },
    },
  });
  if (node.status !== 201) throw new Error(`simulateNode ${name}: creating the node failed: ${node.status} ${node.text}`);
  const path = `/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases/${name}`;
  const lease = await client.request('POST', '/apis/coordination.orch.io/v1/namespaces/orch-node-lease/leases', {
    body: { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name, leaseDurationSeconds: options.leaseDurationSeconds ?? 40, renewTime: micro(Date.now()) } },
  });
  if (lease.status !== 201) throw new Error(`simulateNode ${name}: creating the lease failed: ${lease.status} ${lease.text}`);
  let stopped = false;
  let renewing = false;
  const renew = async (): Promise<void> => {
    const current = await client.request('GET', path);
    if (current.status !== 200 || stopped) return;
    const spec = current.body.spec as Record<string, unknown>;
    await client.request('PUT', path, { body: { ...current.body, spec: { ...spec, renewTime: micro(Date.now()) } } });
  };
  const timer = setInterval(() => {
    if (renewing) return;
    renewing = true;
    renew().catch((err: unknown) => {
      process.stderr.write(`simulateNode ${name}: renewing the lease failed (next renewal in ${options.renewEveryMs ?? 1000} ms): ${String(err)}\n`);
    }).finally(() => {
      renewing = false;
    });
  }, options.renewEveryMs ?? 1000);
  timer.unref();
  return {
    name,
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
