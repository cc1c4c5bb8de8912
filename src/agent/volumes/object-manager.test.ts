import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { isOrchError } from '../../api/errors.js';
import { FakeClock, settle } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';
import { FakeLogger } from '../logging/testing.js';
import { FakeRestClient } from '../orchclient/testing.js';
import { createObjectManager, nodeObjectTtlMs, type ChangeDetectionStrategy } from './object-manager.js';
import { podReferences } from './object-references.js';

const CMS = '/api/v1/namespaces/ns/configmaps';

function pod(uid: string, configMaps: readonly string[], extra: Partial<NonNullable<NodePod['spec']>> = {}): NodePod {
  return {
    metadata: { uid, name: `pod-${uid}`, namespace: 'ns' },
    spec: {
      containers: [{ name: 'c' }],
      volumes: configMaps.map((name) => ({ name: `v-${name}`, configMap: { name } })),
      ...extra,
    },
  };
}

function setup(strategy: ChangeDetectionStrategy): { rest: FakeRestClient; clock: FakeClock; manager: ReturnType<typeof createObjectManager> } {
  const clock = new FakeClock();
  const rest = new FakeRestClient({ now: () => clock.now() });
  rest.put(`${CMS}/a`, { metadata: { name: 'a', namespace: 'ns' }, data: { k: '1' } });
  rest.put(`${CMS}/b`, { metadata: { name: 'b', namespace: 'ns' }, data: { k: '2' } });
  const manager = createObjectManager({ rest, strategy, clock, logger: new FakeLogger() });
  return { rest, clock, manager };
}

const dataOf = (cm: ConfigMap | undefined): string | undefined => cm?.data?.k;

void describe('podReferences', () => {
  void it('collects volumes, projected sources, env, envFrom of every container kind, and pull secrets', () => {
    const refs = podReferences({
      spec: {
        volumes: [{ name: 'a', configMap: { name: 'cm-vol' } }, { name: 'b', secret: { secretName: 's-vol' } },
          { name: 'c', projected: { sources: [{ configMap: { name: 'cm-proj' } }, { secret: { name: 's-proj' } }, { serviceAccountToken: { path: 't' } }] } }],
        initContainers: [{ name: 'i', envFrom: [{ configMapRef: { name: 'cm-init' } }] }],
        containers: [{ name: 'c', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 's-env', key: 'k' } } }, { name: 'Y', value: 'y' }] }],
        ephemeralContainers: [{ name: 'e', env: [{ name: 'Z', valueFrom: { configMapKeyRef: { name: 'cm-eph', key: 'k' } } }] }],
        imagePullSecrets: [{ name: 'pull' }],
      },
    });
    assert.deepEqual([...refs.configMap].sort(), ['cm-eph', 'cm-init', 'cm-proj', 'cm-vol']);
    assert.deepEqual([...refs.secret].sort(), ['pull', 's-env', 's-proj', 's-vol']);
  });
});

void describe('the object manager', () => {
  void it('Get: every read is a GET; a missing object reads undefined', async () => {
    const { rest, manager } = setup('Get');
    manager.registerPod(pod('1', ['a']));
    assert.equal(dataOf(await manager.configMap('ns', 'a')), '1');
    assert.equal(dataOf(await manager.configMap('ns', 'a')), '1');
    assert.equal(await manager.configMap('ns', 'nope'), undefined);
    assert.equal(rest.callsOf('get').length, 3);
    assert.equal(rest.watches.length, 0);
  });

  void it('Cache: one GET per TTL, again when a pod naming it registers; unregistered objects cannot be read', async () => {
    const { rest, clock, manager } = setup('Cache');
    manager.registerPod(pod('1', ['a']));
    assert.equal(dataOf(await manager.configMap('ns', 'a')), '1');
    rest.put(`${CMS}/a`, { metadata: { name: 'a', namespace: 'ns' }, data: { k: 'changed' } });
    await clock.advance(59_000);
    assert.equal(dataOf(await manager.configMap('ns', 'a')), '1', 'within the TTL the kept copy serves');
    assert.equal(rest.callsOf('get').length, 1);
    await clock.advance(1_000);
    assert.equal(dataOf(await manager.configMap('ns', 'a')), 'changed');
    assert.equal(rest.callsOf('get').length, 2);
    manager.registerPod(pod('2', ['a']));
    await manager.configMap('ns', 'a');
    assert.equal(rest.callsOf('get').length, 3, 'a registration drops the kept copy');
    await assert.rejects(manager.configMap('ns', 'b'), (err: unknown) => isOrchError(err) && err.code === 'VOLUME_OBJECT_UNAVAILABLE' && /not registered/.test(err.message));
  });

  void it('Cache: the TTL follows the Node\'s annotation when it has one', async () => {
    const clock = new FakeClock();
    const rest = new FakeRestClient({ now: () => clock.now() });
    rest.put(`${CMS}/a`, { metadata: { name: 'a', namespace: 'ns' }, data: { k: '1' } });
    const manager = createObjectManager({ rest, strategy: 'Cache', clock, logger: new FakeLogger() });
    manager.nodeChanged({ metadata: { annotations: {} } });
    manager.registerPod(pod('1', ['a']));
    await manager.configMap('ns', 'a');
    manager.nodeChanged({ metadata: { annotations: { 'node.alpha.orch.io/ttl': '5' } } });
    await clock.advance(5_000);
    await manager.configMap('ns', 'a');
    assert.equal(rest.callsOf('get').length, 2);
    assert.equal(nodeObjectTtlMs({ metadata: { annotations: { 'node.alpha.orch.io/ttl': 'soon' } } }), undefined);
    assert.equal(nodeObjectTtlMs(undefined), undefined);
  });

  void it('Cache: a failed refresh serves the kept copy', async () => {
    const { rest, clock, manager } = setup('Cache');
    manager.registerPod(pod('1', ['a']));
    await manager.configMap('ns', 'a');
    await clock.advance(61_000);
    rest.failNext('get', '/configmaps/a', 'unavailable');
    assert.equal(dataOf(await manager.configMap('ns', 'a')), '1');
  });

  void it('Watch: one watch per object shared by pods; updates are read without a GET; the last pod gone stops it', async () => {
    const { rest, manager } = setup('Watch');
    manager.registerPod(pod('1', ['a', 'b']));
    manager.registerPod(pod('2', ['a']));
    assert.equal(dataOf(await manager.configMap('ns', 'a')), '1');
    assert.equal(dataOf(await manager.configMap('ns', 'b')), '2');
    await settle();
    assert.equal(rest.watching, 2);
    assert.deepEqual(rest.callsOf('list').map((c) => c.options?.query?.fieldSelector).sort(), ['metadata.name=a', 'metadata.name=b']);
    rest.put(`${CMS}/a`, { metadata: { name: 'a', namespace: 'ns' }, data: { k: 'changed' } });
    assert.equal(dataOf(await manager.configMap('ns', 'a')), 'changed');
    await rest.delete(`${CMS}/b`);
    assert.equal(await manager.configMap('ns', 'b'), undefined);
    assert.equal(rest.callsOf('get').length, 0);
    manager.registerPod(pod('1', ['a'])); // pod 1 changed: it no longer names b
    await settle();
    assert.equal(rest.watching, 1);
    manager.unregisterPod('1');
    await settle();
    assert.equal(rest.watching, 1, 'pod 2 still names a');
    manager.unregisterPod('2');
    await settle();
    assert.equal(rest.watching, 0);
    await assert.rejects(manager.configMap('ns', 'a'), /not registered/);
    await manager.stop();
  });

  void it('Watch: stops watching an immutable object and keeps serving it', async () => {
    const { rest, manager } = setup('Watch');
    rest.put(`${CMS}/fixed`, { metadata: { name: 'fixed', namespace: 'ns' }, immutable: true, data: { k: 'f' } });
    manager.registerPod(pod('1', ['fixed']));
    assert.equal(dataOf(await manager.configMap('ns', 'fixed')), 'f');
    await settle();
    assert.equal(rest.watching, 0);
    assert.equal(dataOf(await manager.configMap('ns', 'fixed')), 'f');
    await manager.stop();
  });

  void it('Watch: a read waits for the first list, and fails after the sync timeout', async () => {
    const { rest, clock, manager } = setup('Watch');
    let release: () => void = () => undefined;
    rest.responders.push((call) => (call.verb === 'list' ? new Promise<void>((resolve) => { release = resolve; }) : undefined));
    manager.registerPod(pod('1', ['a']));
    let failed = false;
    const read = assert.rejects(manager.configMap('ns', 'a'), /the watch has not listed it within 5000 ms/).then(() => { failed = true; });
    await clock.advance(4_999);
    assert.equal(failed, false, 'still waiting for the list');
    await clock.advance(1);
    await read;
    assert.ok(failed);
    const again = manager.configMap('ns', 'a');
    release();
    assert.equal(dataOf(await again), '1');
    await manager.stop();
  });
});
