import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, settle } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { FakeRestClient } from '../orchclient/testing.js';
import { fakeNodeApi, testIdentity } from './fakes.js';
import { initialNode } from './node-object.js';
import { NODES_PATH, nodePath, registerWithApiServer } from './registration.js';
import type { WireNode } from './types.js';

function setup(): { rest: FakeRestClient; clock: FakeClock; logger: FakeLogger; controller: AbortController } {
  return { rest: fakeNodeApi(), clock: new FakeClock(), logger: new FakeLogger(), controller: new AbortController() };
}

const build = (): Promise<WireNode> => Promise.resolve(initialNode(testIdentity));

void describe('registration', () => {
  void it('creates the Node', async () => {
    const { rest, clock, logger, controller } = setup();
    const result = await registerWithApiServer({ client: rest, clock, logger, signal: controller.signal, build });
    assert.equal(result?.created, true);
    assert.equal(result.node.metadata?.name, 'node-a');
    assert.ok(rest.objects.has(nodePath('node-a')));
    assert.deepEqual(rest.calls.map((c) => c.verb), ['create']);
  });

  void it('reconciles an existing Node: default labels updated, others and taints kept, no taints added', async () => {
    const { rest, clock, logger, controller } = setup();
    rest.put(nodePath('node-a'), {
      apiVersion: 'v1', kind: 'Node',
      metadata: { name: 'node-a', labels: { 'orch.io/hostname': 'stale', 'orch.io/os': 'linux', 'orch.io/arch': 'arm64', 'beta.orch.io/os': 'linux', 'beta.orch.io/arch': 'arm64', admin: 'set' } },
      spec: { taints: [{ key: 'admin-taint', effect: 'NoSchedule' }] },
    });
    const result = await registerWithApiServer({ client: rest, clock, logger, signal: controller.signal, build });
    assert.equal(result?.created, false);
    assert.deepEqual(rest.calls.map((c) => c.verb), ['create', 'get', 'patch']);
    assert.equal(rest.callsOf('patch')[0]?.patchType, 'merge');
    const stored = rest.objects.get(nodePath('node-a')) as WireNode;
    const labels = stored.metadata?.labels ?? {};
    assert.equal(labels['orch.io/hostname'], 'node-a');
    assert.equal(labels.admin, 'set');
    assert.equal(labels.team, undefined, '--node-labels apply at first registration only');
    assert.deepEqual(stored.spec?.taints, [{ key: 'admin-taint', effect: 'NoSchedule' }]);
    assert.equal(result.node.metadata?.resourceVersion, stored.metadata?.resourceVersion);
  });

  void it('does not patch an existing Node that is already in line', async () => {
    const { rest, clock, logger, controller } = setup();
    rest.put(nodePath('node-a'), { ...initialNode(testIdentity) });
    await registerWithApiServer({ client: rest, clock, logger, signal: controller.signal, build });
    assert.deepEqual(rest.calls.map((c) => c.verb), ['create', 'get']);
  });

  void it('retries with a doubling back-off capped at 7 s until it succeeds', async () => {
    const { rest, clock, logger, controller } = setup();
    rest.failNext('create', NODES_PATH, 'unavailable', 8);
    const done = registerWithApiServer({ client: rest, clock, logger, signal: controller.signal, build });
    await clock.advance(60_000);
    const result = await done;
    assert.equal(result?.created, true);
    assert.deepEqual(clock.delays, [100, 200, 400, 800, 1600, 3200, 6400, 7000]);
    assert.equal(rest.callsOf('create').length, 9);
    assert.equal(logger.lines.filter((l) => l.msg === 'Unable to register node with API server').length, 8);
  });

  void it('retries when the existing Node cannot be read, and stops when aborted', async () => {
    const { rest, clock, logger, controller } = setup();
    rest.put(nodePath('node-a'), { ...initialNode(testIdentity) });
    rest.failNext('get', nodePath('node-a'), 'unavailable', 100);
    const done = registerWithApiServer({ client: rest, clock, logger, signal: controller.signal, build });
    await clock.advance(1_000);
    assert.ok(rest.callsOf('get').length >= 3);
    controller.abort();
    await settle();
    assert.equal(await done, undefined);
  });
});
