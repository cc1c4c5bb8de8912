import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import { SWAP_GRACE_MS, swappableRestClient } from './swappable.js';
import { FakeRestClient } from './testing.js';

void describe('swappable REST client', () => {
  void it('sends calls to the newest client and closes the replaced one after the grace period', async () => {
    const clock = new FakeClock();
    const first = new FakeRestClient();
    const second = new FakeRestClient();
    first.put('/api/v1/namespaces/a', { metadata: { name: 'a' } });
    second.put('/api/v1/namespaces/a', { metadata: { name: 'b' } });
    const s = swappableRestClient(first, clock);
    assert.equal((await s.rest.get<{ metadata: { name: string } }>('/api/v1/namespaces/a')).metadata.name, 'a');
    s.swap(second);
    assert.equal((await s.rest.get<{ metadata: { name: string } }>('/api/v1/namespaces/a')).metadata.name, 'b');
    assert.equal(first.closed, 0, 'open for the calls under way');
    await clock.advance(SWAP_GRACE_MS);
    assert.equal(first.closed, 1);
    s.rest.close();
    assert.equal(second.closed, 1);
  });
});
