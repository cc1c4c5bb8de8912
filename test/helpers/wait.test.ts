import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WaitAbandoned, waitFor } from './wait.js';

void describe('waitFor', () => {
  void it('returns the first value the probe gives, retrying past its errors', async () => {
    let calls = 0;
    const value = await waitFor('the third call', () => {
      calls++;
      if (calls === 1) throw new Error('not yet');
      return calls === 3 ? 'done' : false;
    }, { timeoutMs: 5_000, intervalMs: 1 });
    assert.equal(value, 'done');
    assert.equal(calls, 3);
  });

  void it('fails at the deadline naming what it waited for and the last error', async () => {
    await assert.rejects(
      waitFor('a thing that never comes', () => {
        throw new Error('still nothing');
      }, { timeoutMs: 30, intervalMs: 5 }),
      { message: 'timed out after 30 ms waiting for a thing that never comes: last error: still nothing' },
    );
  });

  void it('gives up at once when the probe throws WaitAbandoned', async () => {
    let calls = 0;
    await assert.rejects(
      waitFor('a server to start', () => {
        calls++;
        throw new WaitAbandoned('the server exited (1)');
      }, { timeoutMs: 60_000, intervalMs: 1 }),
      { message: 'gave up waiting for a server to start: the server exited (1)' },
    );
    assert.equal(calls, 1);
  });
});
