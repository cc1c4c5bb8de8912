import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import type { StatusResponse } from '../runtime/cri/index.js';
import { runtimeNetworkState } from './network-state.js';

function status(ready: boolean): StatusResponse {
  return {
    status: { conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }, { type: 'NetworkReady', status: ready, reason: ready ? '' : 'NetworkPluginNotReady', message: ready ? '' : 'cni plugin not initialized' }] },
    info: {}, runtimeHandlers: [], features: null,
  };
}

void describe('the runtime network state', () => {
  void it('reads NetworkReady at most once per 5 s and only when asked, in upstream\'s words', async () => {
    const clock = new FakeClock();
    let ready = false;
    let calls = 0;
    const state = runtimeNetworkState({ runtime: { status: () => { calls++; return Promise.resolve(status(ready)); } }, clock });
    assert.equal(calls, 0);
    assert.equal(await state.networkError(), 'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni plugin not initialized');
    ready = true;
    assert.match(await state.networkError() ?? '', /not ready/, 'the reading holds for 5 s');
    assert.equal(calls, 1);
    await clock.advance(5_000);
    assert.equal(await state.networkError(), undefined);
    assert.equal(calls, 2);
  });

  void it('keeps the last reading when Status fails', async () => {
    const clock = new FakeClock();
    let fail = false;
    const state = runtimeNetworkState({ runtime: { status: () => (fail ? Promise.reject(new Error('down')) : Promise.resolve(status(true))) }, clock });
    assert.equal(await state.networkError(), undefined);
    fail = true;
    await clock.advance(5_000);
    assert.equal(await state.networkError(), undefined);
  });
});
