import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/fake-clock.js';
import { FakeResourceClient } from '../client/testing.js';
import { LeaderElector, type LeaderElectionConfig } from './index.js';

const BASE = { namespace: 'orch-system', name: 'orch-controllers', leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

interface Candidate {
  readonly elector: LeaderElector;
  readonly log: string[];
  readonly transitions: string[];
}

function candidate(identity: string, leases: FakeResourceClient, clock: FakeClock, extra: Partial<LeaderElectionConfig> = {}): Candidate {
  const log: string[] = [];
  const transitions: string[] = [];
  const elector = new LeaderElector({
    leases, clock, log: (m) => log.push(m), random: () => 0,
    config: { ...BASE, identity, ...extra },
    callbacks: { onStartedLeading: () => transitions.push('started'), onStoppedLeading: () => transitions.push('stopped') },
  });
  return { elector, log, transitions };
}

function spec(leases: FakeResourceClient): Record<string, unknown> {
  return (leases.peek('orch-system', 'orch-controllers')?.spec ?? {}) as Record<string, unknown>;
}

void describe('leader election on a Lease', () => {
  void it('creates the Lease when there is none and renews it every retry period', async () => {
    const clock = new FakeClock();
    const leases = new FakeResourceClient({ resource: 'leases', kind: 'Lease', apiVersion: 'coordination.orch.io/v1', clock });
    const a = candidate('a', leases, clock);
    a.elector.start();
    await clock.advance(0);
    assert.deepEqual(a.transitions, ['started']);
    assert.equal(spec(leases).holderIdentity, 'a');
    assert.equal(spec(leases).leaseDurationSeconds, 15);
    assert.equal(spec(leases).leaseTransitions, 0);
    const first = spec(leases).renewTime;
    await clock.advance(2_000);
    assert.notEqual(spec(leases).renewTime, first);
    assert.equal(spec(leases).acquireTime, '2024-01-02T03:04:05.000000Z');
    await a.elector.close();
  });

  void it('keeps a second candidate waiting while the leader renews, and lets it take over once the leader is gone for the lease duration', async () => {
    const clock = new FakeClock();
    const leases = new FakeResourceClient({ resource: 'leases', kind: 'Lease', apiVersion: 'coordination.orch.io/v1', clock });
    const a = candidate('a', leases, clock);
    const b = candidate('b', leases, clock);
    a.elector.start();
    await clock.advance(0);
    b.elector.start();
    await clock.advance(30_000);
    assert.deepEqual(b.transitions, []);
    assert.equal(spec(leases).holderIdentity, 'a');
    const releasedAt = clock.now();
    await a.elector.close();
    const before = spec(leases);
    assert.equal(before.holderIdentity, undefined, 'a released the lease when it closed');
    await clock.advance(2_400);
    assert.deepEqual(b.transitions, ['started']);
    assert.equal(spec(leases).holderIdentity, 'b');
    assert.equal(spec(leases).leaseTransitions, 1);
    assert.ok(clock.now() - releasedAt <= 2_400);
    await b.elector.close();
  });

  void it('takes over a lease whose holder vanished without releasing, only after the lease duration', async () => {
    const clock = new FakeClock();
    const leases = new FakeResourceClient({ resource: 'leases', kind: 'Lease', apiVersion: 'coordination.orch.io/v1', clock });
    await leases.create('orch-system', {
      metadata: { name: 'orch-controllers' },
      spec: { holderIdentity: 'crashed', leaseDurationSeconds: 15, renewTime: '2024-01-02T03:04:00.000000Z', leaseTransitions: 3 },
    });
    const b = candidate('b', leases, clock);
    b.elector.start();
    await clock.advance(14_000);
    assert.deepEqual(b.transitions, []);
    await clock.advance(2_000);
    assert.deepEqual(b.transitions, ['started']);
    assert.equal(spec(leases).leaseTransitions, 4);
    await b.elector.close();
  });

  void it('steps down when renewals fail for the renew deadline, and tries again afterwards', async () => {
    const clock = new FakeClock();
    const leases = new FakeResourceClient({ resource: 'leases', kind: 'Lease', apiVersion: 'coordination.orch.io/v1', clock });
    const a = candidate('a', leases, clock);
    a.elector.start();
    await clock.advance(0);
    for (let i = 0; i < 5; i++) leases.failNext('get', new Error('etcd is away'));
    await clock.advance(8_000);
    assert.deepEqual(a.transitions, ['started'], 'still the leader 8 s into the failures');
    await clock.advance(2_000);
    assert.deepEqual(a.transitions, ['started', 'stopped']);
    assert.ok(a.log.some((l) => l.includes('lost the lease orch-system/orch-controllers')));
    // The store answers again: a reacquires its own lease.
    await clock.advance(2_400);
    assert.deepEqual(a.transitions, ['started', 'stopped', 'started']);
    await a.elector.close();
    assert.deepEqual(a.transitions, ['started', 'stopped', 'started', 'stopped']);
  });

  void it('never lets two candidates lead at once when they race for a free lease', async () => {
    const clock = new FakeClock();
    const leases = new FakeResourceClient({ resource: 'leases', kind: 'Lease', apiVersion: 'coordination.orch.io/v1', clock });
    const all = ['a', 'b', 'c'].map((id) => candidate(id, leases, clock));
    for (const c of all) c.elector.start();
    for (let t = 0; t < 10; t++) {
      await clock.advance(1_000);
      assert.equal(all.filter((c) => c.elector.isLeader).length, 1);
    }
    for (const c of all) await c.elector.close();
  });
});
