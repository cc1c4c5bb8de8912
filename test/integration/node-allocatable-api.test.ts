/**
 * Node allocatable in API-server mode: the real nodeagent binary registered with a real
 * orch-apiserver (SQLite, the admin connection file) on a real containerd. With
 * `--reserved-cpus=1`, `--system-reserved=memory=200Mi` and
 * `--experimental-allocatable-ignore-eviction`, the Node's allocatable is one CPU and the memory
 * capacity less 200Mi (the 100Mi hard eviction threshold ignored), and the agent records the
 * NodeAllocatableEnforced event on the Node.
 */
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Node } from 'kubernetes-types/core/v1.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent.js';
import { runKubectl, startApiServer, type ApiServer } from '../helpers/apiserver.js';
import { freePort, startContainerd, type ContainerdInstance } from '../helpers/containerd.js';
import { NODE } from '../helpers/pods.js';
import { waitFor } from '../helpers/wait.js';
import { removeTempDir } from '../helpers/tempdir.js';

let containerd: ContainerdInstance;
let server: ApiServer;
let agent: AgentProcess | undefined;
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'node-allocatable-api-'));
  containerd = await startContainerd();
  server = await startApiServer({ storage: 'sqlite' });
  agent = await startAgentProcess({
    endpoint: containerd.endpoint, cgroupRoot: containerd.cgroupRoot, rootDir: join(dir, 'root'),
    args: [
      `--hostname-override=${NODE}`, '--node-ip=127.0.0.1', `--port=${await freePort()}`, `--orchconfig=${server.adminKubeconfig}`,
      '--reserved-cpus=1', '--system-reserved=memory=200Mi', '--experimental-allocatable-ignore-eviction',
    ],
  });
});

after(async () => {
  await agent?.stop();
  await server.stop();
  await containerd.stop();
  await removeTempDir(dir);
});

function kibibytes(quantity: string | undefined): number {
  const m = /^(\d+)Ki$/.exec(quantity ?? '');
  assert.ok(m?.[1] !== undefined, `not a quantity in Ki: ${String(quantity)}`);
  return Number(m[1]);
}

void describe('node allocatable in API-server mode', () => {
  void it('reports allocatable after reservedSystemCPUs and without the ignored eviction threshold, with the NodeAllocatableEnforced event', async () => {
    const node = await waitFor('the node with its status', async () => {
      const res = await server.client.request('GET', `/api/v1/nodes/${NODE}`);
      const n = res.status === 200 ? res.body as Node : undefined;
      return n?.status?.allocatable?.cpu === undefined ? undefined : n;
    }, { timeoutMs: 60_000 });
    const { capacity, allocatable } = node.status ?? {};
    assert.equal(capacity?.cpu, '2');
    assert.equal(allocatable?.cpu, '1', 'reservedSystemCPUs=1 is one CPU off');
    assert.equal(kibibytes(allocatable.memory), kibibytes(capacity.memory) - 200 * 1024, 'the reservation, not the eviction threshold');
    await waitFor('the NodeAllocatableEnforced event', async () =>
      /NodeAllocatableEnforced\s+node\/testnode\s+Updated Node Allocatable limit across pods/.test((await runKubectl(server, ['get', 'events', '-A'])).stdout), { timeoutMs: 30_000 });
  });
});
