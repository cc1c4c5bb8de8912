import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import type { RequestDigest } from './config.js';
import { FlowControl, type Decision } from './dispatcher.js';
import { suggestedFlowSchemas, suggestedPriorityLevels } from './suggested.js';

const base: RequestDigest = { user: 'alice', groups: ['system:authenticated'], verb: 'list', resourceRequest: true, apiGroup: '', resource: 'pods', subresource: '', namespace: 'default', path: '/api/v1/namespaces/default/pods' };

async function where(fc: FlowControl, r: Partial<RequestDigest>): Promise<string> {
  const d = await fc.admit({ ...base, ...r });
  if (d.kind === 'execute') d.release();
  return `${d.flowSchema.name}/${d.level.name}`;
}

function seat(d: Decision): () => void {
  if (d.kind !== 'execute') assert.fail(`rejected: ${d.reason}`);
  return d.release;
}

void describe('FlowControl', () => {
  void it('classifies requests by upstream\'s suggested configuration', async () => {
    const fc = new FlowControl({ clock: new FakeClock(), serverConcurrencyLimit: 600, maxWaitMs: 15_000 });
    assert.equal(await where(fc, { user: 'admin', groups: ['system:masters', 'system:authenticated'] }), 'exempt/exempt');
    const node = { user: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
    assert.equal(await where(fc, { ...node, verb: 'update', apiGroup: 'coordination.orch.io', resource: 'leases', namespace: 'orch-node-lease' }), 'system-node-high/node-high');
    assert.equal(await where(fc, { ...node, verb: 'patch', resource: 'nodes', subresource: 'status', namespace: '' }), 'system-node-high/node-high');
    assert.equal(await where(fc, { ...node, verb: 'list' }), 'system-nodes/system');
    assert.equal(await where(fc, { user: 'system:serviceaccount:kube-system:kube-scheduler', groups: ['system:serviceaccounts', 'system:authenticated'], verb: 'update', apiGroup: 'coordination.orch.io', resource: 'leases', namespace: 'kube-system' }), 'system-leader-election/leader-election');
    assert.equal(await where(fc, { user: 'system:serviceaccount:kube-system:x', groups: ['system:serviceaccounts', 'system:authenticated'] }), 'kube-system-service-accounts/workload-high');
    assert.equal(await where(fc, { user: 'system:serviceaccount:web:x', groups: ['system:serviceaccounts', 'system:authenticated'] }), 'service-accounts/workload-low');
    assert.equal(await where(fc, {}), 'global-default/global-default');
    assert.equal(await where(fc, { resourceRequest: false, verb: 'get', path: '/healthz', groups: ['system:unauthenticated'], user: 'system:anonymous' }), 'probes/exempt');
    assert.equal(await where(fc, { groups: ['other'] }), 'catch-all/catch-all');
  });

  void it('shares the server limit by concurrency shares, and turns away what is beyond a level\'s queues', async () => {
    const clock = new FakeClock();
    const fc = new FlowControl({ clock, serverConcurrencyLimit: 600, maxWaitMs: 15_000 });
    const limits = fc.limits();
    // 600 seats over 245 shares (30+40+10+40+100+20+5).
    assert.equal(limits.get('node-high'), Math.ceil((600 * 40) / 245));
    assert.equal(limits.get('catch-all'), Math.ceil((600 * 5) / 245));
    assert.equal(limits.has('exempt'), false);
    const levels = suggestedPriorityLevels().map((l) => (l.metadata as { name: string }).name === 'global-default'
      ? { ...l, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 20, limitResponse: { type: 'Queue', queuing: { queues: 1, handSize: 1, queueLengthLimit: 1 } } } } } : l);
    fc.configure(levels, suggestedFlowSchemas());
    const limit = fc.limits().get('global-default') ?? 0;
    const seats = await Promise.all(Array.from({ length: limit }, async () => seat(await fc.admit(base))));
    const queued = fc.admit(base);
    const over = await fc.admit(base);
    assert.deepEqual({ kind: over.kind, reason: 'reason' in over ? over.reason : '' }, { kind: 'reject', reason: 'queue-full' });
    for (const release of seats) release();
    const got = await queued;
    assert.equal(got.kind, 'execute');
    seat(got)();
    // The node lease renewals of another level are not held up by the full one.
    const lease = await fc.admit({ ...base, user: 'system:node:n1', groups: ['system:nodes'], verb: 'update', apiGroup: 'coordination.orch.io', resource: 'leases', namespace: 'orch-node-lease' });
    assert.equal(lease.kind, 'execute');
  });

  void it('serves a schema naming a missing level as catch-all, and keeps the mandatory objects', async () => {
    const fc = new FlowControl({ clock: new FakeClock(), serverConcurrencyLimit: 600, maxWaitMs: 15_000 });
    fc.configure([], [{ metadata: { name: 'mine', uid: 'u1' }, spec: { priorityLevelConfiguration: { name: 'nowhere' }, matchingPrecedence: 10, rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }] }] } }]);
    assert.equal(await where(fc, {}), 'catch-all/catch-all');
    assert.equal(await where(fc, { groups: ['system:masters'] }), 'exempt/exempt');
  });
});
