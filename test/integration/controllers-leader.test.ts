/**
 * One leader among orch-apiserver replicas on one etcd: two servers on the same etcd prefix
 * elect a leader with the orch-system/orch-controllers Lease (short periods:
 * --leader-elect-lease-duration=4s, renew deadline 3s, retry period 500ms); only the leader runs
 * the loops and binds pods. Killed without releasing the Lease (SIGKILL), the leader is replaced
 * once the Lease has not been renewed for its duration, and the other replica binds pods.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { startApiServer, v1Pod, type ApiServer } from '../helpers/apiserver.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { simulateNode, type SimulatedNode } from '../helpers/nodes.js';
import { waitFor } from '../helpers/wait.js';

const LEASE = '/apis/coordination.orch.io/v1/namespaces/orch-system/leases/orch-controllers';
let etcd: EtcdCluster;
const servers: ApiServer[] = [];
let sim: SimulatedNode | undefined;

interface LeaseSpec { holderIdentity?: string; leaseTransitions?: number; leaseDurationSeconds?: number }

const running = (s: ApiServer): boolean => s.logs().includes('controllers: running scheduler');

async function lease(s: ApiServer): Promise<LeaseSpec | undefined> {
  const res = await s.client.request('GET', LEASE);
  return res.status === 200 ? (res.body.spec as LeaseSpec) : undefined;
}

async function boundNode(s: ApiServer, name: string): Promise<string | undefined> {
  const res = await s.client.request('GET', `/api/v1/namespaces/default/pods/${name}`);
  return res.status === 200 ? (res.body as Pod).spec?.nodeName : undefined;
}

before(async () => {
  etcd = await startEtcd();
  const args = ['--etcd-prefix=/orch-leader', '--leader-elect-lease-duration=4s', '--leader-elect-renew-deadline=3s', '--leader-elect-retry-period=500ms'];
  for (let i = 0; i < 2; i++) servers.push(await startApiServer({ storage: 'etcd', etcdEndpoints: etcd.endpoints, controllers: true, args }));
});

after(async () => {
  sim?.stop();
  for (const s of servers) await s.stop();
  await etcd.stop();
});

void describe('leader election among API server replicas', () => {
  void it('runs the loops on one replica, and on the other once the leader is gone for the lease duration', async () => {
    const [first, second] = servers as [ApiServer, ApiServer];
    const leader = await waitFor('a leader', () => servers.find(running), { timeoutMs: 20_000 });
    const follower = leader === first ? second : first;
    const spec = await waitFor('the lease', () => lease(follower));
    assert.equal(spec.leaseDurationSeconds, 4);
    await waitFor('the follower to see the leader', () => follower.logs().includes(`leader election: ${spec.holderIdentity ?? ''} leads`));
    assert.equal(running(follower), false);
    sim = await simulateNode(follower.client, 'sim');
    const created = await follower.client.request('POST', '/api/v1/namespaces/default/pods', { body: v1Pod('first', '') });
    assert.equal(created.status, 201, created.text);
    assert.equal(await waitFor('first bound by the leader', () => boundNode(follower, 'first')), 'sim');

    process.kill(leader.pid ?? 0, 'SIGKILL');
    const killedAt = Date.now();
    await waitFor('the follower to lead', () => running(follower), { timeoutMs: 20_000, intervalMs: 100 });
    const took = Date.now() - killedAt;
    assert.ok(took >= 2_500, `took over ${took} ms after the leader died: before its lease ran out`);
    const after = await waitFor('the new holder', async () => {
      const s = await lease(follower);
      return s?.holderIdentity !== spec.holderIdentity ? s : undefined;
    });
    assert.equal(after.leaseTransitions, (spec.leaseTransitions ?? 0) + 1);
    const again = await follower.client.request('POST', '/api/v1/namespaces/default/pods', { body: v1Pod('second', '') });
    assert.equal(again.status, 201, again.text);
    assert.equal(await waitFor('second bound by the new leader', () => boundNode(follower, 'second')), 'sim');
  });
});
