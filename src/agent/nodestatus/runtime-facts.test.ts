import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeRuntime } from '../runtime/cri/testing.js';
import { runtimeNodeFacts } from './runtime-facts.js';

void describe('runtime node facts', () => {
  void it('reads the conditions, version and images of the runtime, and a missing condition as not ready', async () => {
    const fake = new FakeRuntime();
    fake.images.set('busybox:1.35', 'sha256:busybox');
    const facts = runtimeNodeFacts(fake, () => 'stalled');
    const status = await facts.runtimeStatus();
    assert.equal(status.runtime.ready, true);
    assert.equal(status.network.ready, true);
    assert.equal((await facts.runtimeVersion()).name.length > 0, true);
    assert.ok((await facts.images()).some((i) => i.names.includes('busybox:1.35')));
    assert.equal(facts.health(), 'stalled');
    fake.conditions = fake.conditions.filter((c) => c.type !== 'NetworkReady');
    const bare = runtimeNodeFacts(fake, () => undefined);
    assert.deepEqual((await bare.runtimeStatus()).network, { ready: false, reason: 'NetworkReadyMissing', message: 'the runtime reports no NetworkReady condition' });
  });
});
