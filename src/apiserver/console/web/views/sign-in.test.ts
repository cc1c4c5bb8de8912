import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, type FetchFn } from '../api.js';
import { NETWORK_RETRY_MS, whoAmI } from './sign-in.js';

/** A fetch that plays `answers` in turn: an Error is a request that did not reach the server. */
function scripted(answers: readonly (Error | { status: number; body: unknown })[]): { fetch: FetchFn; calls: () => number } {
  let calls = 0;
  const fetch: FetchFn = (input) => {
    const answer = answers[calls++];
    if (answer === undefined) return Promise.reject(new Error(`unexpected call ${calls} to ${input}`));
    if (answer instanceof Error) return Promise.reject(answer);
    return Promise.resolve(new Response(JSON.stringify(answer.body), { status: answer.status, headers: { 'Content-Type': 'application/json' } }));
  };
  return { fetch, calls: () => calls };
}

const REVIEW = { status: 201, body: { status: { userInfo: { username: 'system:serviceaccount:default:default' } } } };

void describe('the sign-in check', () => {
  void it('tries again after a request that did not reach the server, with the pauses given', async () => {
    const cut = new TypeError('Failed to fetch');
    const f = scripted([cut, cut, REVIEW]);
    const pauses: number[] = [];
    const user = await whoAmI('t', f.fetch, (ms) => {
      pauses.push(ms);
      return Promise.resolve();
    });
    assert.equal(user, 'system:serviceaccount:default:default');
    assert.equal(f.calls(), 3);
    assert.deepEqual(pauses, [...NETWORK_RETRY_MS]);
  });

  void it('gives up after the last pause and names what failed', async () => {
    const cut = new TypeError('Failed to fetch');
    const f = scripted([cut, cut, cut]);
    await assert.rejects(whoAmI('t', f.fetch, () => Promise.resolve()), (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.status, 0);
      assert.match(err.message, /selfsubjectreviews: the API server cannot be reached \(Failed to fetch\)/);
      return true;
    });
    assert.equal(f.calls(), 3);
  });

  void it('takes an answer of the server as final: 401 refused at once, 403 signed in', async () => {
    const refused = scripted([{ status: 401, body: { kind: 'Status', reason: 'Unauthorized', message: 'Unauthorized' } }]);
    await assert.rejects(whoAmI('t', refused.fetch, () => Promise.reject(new Error('no pause expected'))), (err: unknown) => err instanceof ApiError && err.status === 401);
    assert.equal(refused.calls(), 1);
    const forbidden = scripted([{ status: 403, body: { kind: 'Status', reason: 'Forbidden', message: 'forbidden' } }]);
    assert.equal(await whoAmI('t', forbidden.fetch, () => Promise.reject(new Error('no pause expected'))), 'signed in');
  });
});
