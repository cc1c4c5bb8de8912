import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeLogger } from '../logging/testing.js';
import { podCidrFollower } from './pod-cidr.js';

void describe('the pod CIDR follower', () => {
  void it('hands each new spec.podCIDR to the runtime once, skips empty ones, and retries after a failure', async () => {
    const handed: string[] = [];
    let fail = true;
    const follow = podCidrFollower({
      runtime: { updateRuntimeConfig: (r) => { if (fail) return Promise.reject(new Error('busy')); handed.push(r.networkConfig?.podCidr ?? ''); return Promise.resolve(); } },
      logger: new FakeLogger(),
    });
    await follow(undefined);
    await follow('');
    await follow('10.244.1.0/24');
    assert.deepEqual(handed, []);
    fail = false;
    await follow('10.244.1.0/24');
    await follow('10.244.1.0/24');
    await follow('10.244.2.0/24');
    assert.deepEqual(handed, ['10.244.1.0/24', '10.244.2.0/24']);
  });
});
