import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { OrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { FakeRuntime } from '../runtime/cri/testing.js';
import { createPleg } from './index.js';

const unreachable = (): OrchError => new OrchError('CRI_UNAVAILABLE', 'unavailable', 'CRI ListPodSandbox: connect ENOENT /run/containerd/containerd.sock');

void describe('PLEG while the runtime is unreachable', () => {
  void it('logs one warning when the runtime goes away and one line when it comes back', async () => {
    const clock = new FakeClock();
    const fake = new FakeRuntime();
    const logger = new FakeLogger();
    const pleg = createPleg({
      runtime: fake, logger, clock,
      cache: { observe: () => undefined, relisted: () => undefined },
      onPodChanged: () => undefined,
    });
    await pleg.relist();
    for (let i = 0; i < 30; i++) {
      fake.failNext('listPodSandbox', unreachable());
      await pleg.relist();
      await clock.advance(1000);
    }
    await pleg.relist();
    await pleg.relist();
    const lines = logger.lines.filter((l) => l.level === 'warn' || l.level === 'info' || l.level === 'error');
    assert.deepEqual(lines.map((l) => `${l.level} ${l.msg}`), [
      'warn The container runtime is unreachable; pods wait for it to come back',
      'info The container runtime is reachable again',
    ]);
    assert.equal(lines[1]?.fields.unreachableForMs, 30_000);
  });
});
