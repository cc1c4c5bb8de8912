import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GRPCDeadlineExceededError, GRPCUnavailableError, isRecoverableError } from 'etcd3';
import { Breaker, BreakerOpenError, EtcdDeadlineError, etcdFaultHandling, PassPolicy, RetryPolicy } from './etcd-faults.js';

const fail = (err: Error) => (): never => {
  throw err;
};

void describe('etcd client fault handling', () => {
  void it('has no breaker in front of a lone member: calls go through right after failures', async () => {
    const faults = etcdFaultHandling(1);
    const host = faults.host?.('127.0.0.1:2379');
    assert.ok(host instanceof PassPolicy);
    for (let i = 0; i < 20; i++) await assert.rejects(host.execute(fail(new GRPCDeadlineExceededError('stall'))));
    assert.equal(await host.execute(() => 'ok'), 'ok');
  });

  void it('opens a member breaker after consecutive failures, for openMs, then lets one probe through', async () => {
    let now = 1000;
    const breaker = new Breaker('m1', { failures: 3, openMs: 500, now: () => now });
    for (let i = 0; i < 2; i++) await assert.rejects(breaker.execute(fail(new GRPCUnavailableError('down'))), GRPCUnavailableError);
    assert.equal(breaker.state, 'closed');
    await assert.rejects(breaker.execute(fail(new GRPCUnavailableError('down'))), GRPCUnavailableError);
    assert.equal(breaker.state, 'open');
    await assert.rejects(breaker.execute(() => 'never'), BreakerOpenError);
    now += 499;
    await assert.rejects(breaker.execute(() => 'never'), BreakerOpenError);
    now += 1;
    assert.equal(breaker.state, 'half-open');
    let release: (v: string) => void = () => undefined;
    const probe = breaker.execute(() => new Promise<string>((resolve) => { release = resolve; }));
    await assert.rejects(breaker.execute(() => 'second'), BreakerOpenError, 'one probe at a time');
    release('probe');
    assert.equal(await probe, 'probe');
    assert.equal(breaker.state, 'closed');
    assert.equal(await breaker.execute(() => 'after'), 'after');
  });

  void it('does not count failures that are not the member\'s (a compare that failed, a bad request)', async () => {
    const breaker = new Breaker('m1', { failures: 1, openMs: 500, now: () => 0 });
    await assert.rejects(breaker.execute(fail(new Error('etcdserver: duplicate key given in txn request'))));
    assert.equal(breaker.state, 'closed');
  });

  void it('retries a connection-level failure, never a call whose deadline passed', async () => {
    const retry = new RetryPolicy(2);
    let calls = 0;
    assert.equal(await retry.execute(() => {
      calls += 1;
      if (calls < 3) throw new GRPCUnavailableError('reset');
      return 'third';
    }), 'third');
    calls = 0;
    await assert.rejects(retry.execute(() => {
      calls += 1;
      throw new GRPCDeadlineExceededError('deadline');
    }), GRPCDeadlineExceededError);
    assert.equal(calls, 1);
    calls = 0;
    await assert.rejects(retry.execute(() => {
      calls += 1;
      throw new GRPCUnavailableError('down');
    }), GRPCUnavailableError);
    assert.equal(calls, 3);
  });

  void it('passes a deadline on as not recoverable (etcd3 then keeps the channel), and a breaker still counts it', async () => {
    const notRecoverable = (err: unknown): boolean => err instanceof EtcdDeadlineError && !isRecoverableError(err) && /stall/.test(err.message);
    await assert.rejects(new PassPolicy().execute(fail(new GRPCDeadlineExceededError('stall'))), notRecoverable);
    const breaker = new Breaker('m1', { failures: 2, openMs: 500, now: () => 0 });
    for (let i = 0; i < 2; i++) await assert.rejects(breaker.execute(fail(new GRPCDeadlineExceededError('stall'))), notRecoverable);
    assert.equal(breaker.state, 'open');
    // A connection-level failure stays recoverable: etcd3 resets the channel and reconnects.
    await assert.rejects(new PassPolicy().execute(fail(new GRPCUnavailableError('down'))), (err: unknown) => err instanceof GRPCUnavailableError && isRecoverableError(err));
  });

  void it('puts a breaker in front of each member of a cluster', () => {
    const faults = etcdFaultHandling(3);
    assert.ok(faults.host?.('a') instanceof Breaker);
  });
});
