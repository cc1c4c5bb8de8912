import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';

import type { Cancellation, GateRequest, GateResult, RequestGate } from '../flowcontrol/index.js';
import { startTestApiServer, TEST_TOKEN, type TestApiServer } from './testing.js';
import { rawRequest } from '../../../test/helpers/loopback.js';
import { waitFor } from '../../../test/helpers/wait.js';

/** A gate that turns away requests for `busy` and holds requests for `held` until their client leaves. */
class ScriptedGate implements RequestGate {
  readonly held: string[] = [];
  readonly cancelled: string[] = [];
  admit(r: GateRequest, signal?: Cancellation): Promise<GateResult> {
    const headers = { 'X-Orch-PF-PriorityLevel-UID': 'level-uid' };
    if (r.namespace === 'busy') return Promise.resolve({ admitted: false, headers, message: 'Too many requests, please try again later' });
    if (r.namespace !== 'held') return Promise.resolve({ admitted: true, headers, release: () => undefined });
    this.held.push(r.path);
    return new Promise((resolve) => {
      signal?.addEventListener('abort', () => {
        this.cancelled.push(r.path);
        resolve({ admitted: false, headers, message: 'the client left' });
      }, { once: true });
    });
  }
}

void describe('orch-apiserver: the request gate', () => {
  let api: TestApiServer;
  const gate = new ScriptedGate();
  before(async () => {
    api = await startTestApiServer({ gate });
  });
  after(async () => {
    await api.close();
  });

  void it('answers a request turned away with 429, Retry-After and the gate\'s headers, and logs nothing', async () => {
    const answer = await rawRequest(api.port, '/api/v1/namespaces/busy/pods', { token: TEST_TOKEN });
    assert.equal(answer.status, 429);
    assert.equal(answer.headers['retry-after'], '1');
    assert.equal(answer.headers['x-orch-pf-prioritylevel-uid'], 'level-uid');
    const status = JSON.parse(answer.body) as { reason: string; details: { retryAfterSeconds: number } };
    assert.equal(status.reason, 'TooManyRequests');
    assert.equal(status.details.retryAfterSeconds, 1);
    const admitted = await rawRequest(api.port, '/api/v1/namespaces/default/pods', { token: TEST_TOKEN });
    assert.equal(admitted.status, 200, admitted.body + api.logs.join('\n'));
    assert.deepEqual(api.logs, []);
  });

  void it('tells the gate when the client of a waiting request goes away', async () => {
    const req = request({ port: api.port, host: '127.0.0.1', path: '/api/v1/namespaces/held/pods', headers: { Authorization: `Bearer ${TEST_TOKEN}` } });
    req.on('error', () => undefined);
    req.end();
    await waitFor('the request to reach the gate', () => Promise.resolve(gate.held.length === 1));
    assert.deepEqual(gate.cancelled, []);
    req.destroy();
    await waitFor('the gate to see the client leave', () => Promise.resolve(gate.cancelled.length === 1));
    assert.deepEqual(gate.cancelled, ['/api/v1/namespaces/held/pods']);
  });
});
