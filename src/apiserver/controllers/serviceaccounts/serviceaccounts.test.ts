import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../api/fake-clock.js';
import { Informer } from '../client/index.js';
import { FakeResourceClient } from '../client/testing.js';
import { RootCaPublisher, ServiceAccountsController } from './index.js';

function setup(): { clock: FakeClock; namespaces: FakeResourceClient; accounts: FakeResourceClient; configMaps: FakeResourceClient; log: string[] } {
  const clock = new FakeClock();
  return {
    clock,
    log: [],
    // Deleting a namespace marks it terminating first (a MODIFIED event), as the server does.
    namespaces: new FakeResourceClient({ resource: 'namespaces', kind: 'Namespace', clock, gracePeriod: () => 30 }),
    accounts: new FakeResourceClient({ resource: 'serviceaccounts', kind: 'ServiceAccount', clock }),
    configMaps: new FakeResourceClient({ resource: 'configmaps', kind: 'ConfigMap', clock }),
  };
}

/** The serviceaccount-controller over the setup's clients, started; close() stops it and its informers. */
async function startAccountsLoop(s: ReturnType<typeof setup>): Promise<{ close(): Promise<void> }> {
  const common = { clock: s.clock, log: (l: string) => s.log.push(l) };
  const namespaces = new Informer({ client: s.namespaces, what: 'namespaces', ...common });
  const accounts = new Informer({ client: s.accounts, what: 'accounts', ...common });
  const loop = new ServiceAccountsController({ ...common, namespaces, serviceAccounts: accounts, serviceAccountsClient: s.accounts });
  await namespaces.start();
  await accounts.start();
  loop.start();
  await s.clock.advance(0);
  return {
    close: async () => {
      await loop.close();
      await namespaces.close();
      await accounts.close();
    },
  };
}

void describe('the service account loops', () => {
  void it('serviceaccount-controller: a default account in every active namespace, made again when deleted', async () => {
    const s = setup();
    await s.namespaces.create('', { metadata: { name: 'a' } });
    await s.namespaces.create('', { metadata: { name: 'gone', deletionTimestamp: '2024-01-01T00:00:00Z' } });
    const loop = await startAccountsLoop(s);
    assert.deepEqual(s.accounts.all().map((sa) => (sa.metadata as { namespace: string }).namespace), ['a']);
    await s.namespaces.create('', { metadata: { name: 'b' } });
    await s.clock.advance(0);
    assert.ok(s.accounts.peek('b', 'default') !== undefined);
    await s.accounts.delete('a', 'default');
    await s.clock.advance(0);
    assert.ok(s.accounts.peek('a', 'default') !== undefined);
    s.accounts.failNext('create', new Error('store down'));
    await s.namespaces.create('', { metadata: { name: 'c' } });
    await s.clock.advance(0);
    assert.equal(s.accounts.peek('c', 'default'), undefined);
    assert.ok(s.log.some((l) => l.includes('serviceaccount-controller: namespace c: store down (trying again in 1 s)')));
    await s.clock.advance(1_000);
    assert.ok(s.accounts.peek('c', 'default') !== undefined);
    await loop.close();
  });

  void it('serviceaccount-controller: a namespace added as a pass ends on a terminating one is not left waiting', async () => {
    const s = setup();
    await s.namespaces.create('', { metadata: { name: 'a' } });
    const loop = await startAccountsLoop(s);
    // The two events come together, as when one namespace is deleted and the next made at once
    // (the store commits both in one transaction): the first ends the queue's pass with nothing
    // to do, the second comes before that pass has returned.
    await Promise.all([s.namespaces.delete('', 'a'), s.namespaces.create('', { metadata: { name: 'next' } })]);
    await s.clock.advance(0);
    assert.ok(s.accounts.peek('next', 'default') !== undefined, 'the default account of the namespace made last');
    await loop.close();
  });

  void it('root-ca-certificate-publisher-controller: kube-root-ca.crt in every namespace, written back when changed or deleted', async () => {
    const s = setup();
    await s.namespaces.create('', { metadata: { name: 'a' } });
    const common = { clock: s.clock, log: (l: string) => s.log.push(l) };
    const namespaces = new Informer({ client: s.namespaces, what: 'namespaces', ...common });
    const configMaps = new Informer({ client: s.configMaps, what: 'configmaps', ...common });
    const loop = new RootCaPublisher({ ...common, namespaces, configMaps, configMapsClient: s.configMaps, caPem: 'PEM' });
    await namespaces.start();
    await configMaps.start();
    loop.start();
    await s.clock.advance(0);
    const cm = s.configMaps.peek('a', 'kube-root-ca.crt');
    assert.ok(cm !== undefined);
    assert.deepEqual(cm.data, { 'ca.crt': 'PEM' });
    assert.match(String((cm.metadata as { annotations: Record<string, string> }).annotations['orch.io/description']), /CA bundle/);
    await s.configMaps.update('a', 'kube-root-ca.crt', { ...cm, data: { 'ca.crt': 'tampered', extra: 'x' } });
    await s.clock.advance(0);
    assert.deepEqual(s.configMaps.peek('a', 'kube-root-ca.crt')?.data, { 'ca.crt': 'PEM' });
    await s.configMaps.delete('a', 'kube-root-ca.crt');
    await s.clock.advance(0);
    assert.deepEqual(s.configMaps.peek('a', 'kube-root-ca.crt')?.data, { 'ca.crt': 'PEM' });
    await loop.close();
    await namespaces.close();
    await configMaps.close();
  });
});
