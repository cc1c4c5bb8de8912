import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import type { WireObject } from '../registry/index.js';
import { podDefinition } from '../resources/pods/index.js';
import { StatusError } from '../status/index.js';
import { admitServiceAccount, apiAccessVolumeSource, withServiceAccountAdmission, type ServiceAccountAdmissionOptions } from './index.js';

const MOUNT = { name: 'kube-api-access-abcde', readOnly: true, mountPath: '/var/run/secrets/orch.io/serviceaccount' };

function setup(accounts: Record<string, WireObject>): { options: ServiceAccountAdmissionOptions; lookups: string[]; clock: FakeClock } {
  const lookups: string[] = [];
  const clock = new FakeClock();
  return {
    clock,
    lookups,
    options: {
      clock,
      suffix: () => 'abcde',
      serviceAccount: (namespace, name) => { lookups.push(`${namespace}/${name}`); return Promise.resolve(accounts[`${namespace}/${name}`]); },
    },
  };
}

function pod(spec: WireObject = {}, annotations?: Record<string, string>): WireObject {
  return { metadata: { name: 'p', ...(annotations === undefined ? {} : { annotations }) }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } };
}

const specOf = (p: WireObject): Record<string, unknown> => p.spec as Record<string, unknown>;

void describe('ServiceAccount admission', () => {
  void it('names the default account, mounts the API access volume in every container, copies the pull secrets', async () => {
    const { options } = setup({ 'ns/default': { metadata: { name: 'default' }, imagePullSecrets: [{ name: 'regcred' }] } });
    const p = pod({ initContainers: [{ name: 'i', image: 'busybox' }] });
    await admitServiceAccount(options, p, 'ns');
    const spec = specOf(p);
    assert.equal(spec.serviceAccountName, 'default');
    assert.deepEqual(spec.volumes, [{ name: 'kube-api-access-abcde', projected: apiAccessVolumeSource() }]);
    assert.deepEqual((spec.containers as WireObject[])[0]?.volumeMounts, [MOUNT]);
    assert.deepEqual((spec.initContainers as WireObject[])[0]?.volumeMounts, [MOUNT]);
    assert.deepEqual(spec.imagePullSecrets, [{ name: 'regcred' }]);
    assert.deepEqual(apiAccessVolumeSource().sources, [
      { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ]);
  });

  void it('follows automountServiceAccountToken of the pod over that of the account, and keeps a mount already at the path', async () => {
    const { options } = setup({ 'ns/robot': { metadata: { name: 'robot' }, automountServiceAccountToken: false } });
    const off = pod({ serviceAccountName: 'robot' });
    await admitServiceAccount(options, off, 'ns');
    assert.equal(specOf(off).volumes, undefined);
    const on = pod({ serviceAccountName: 'robot', automountServiceAccountToken: true, containers: [
      { name: 'own', image: 'busybox', volumeMounts: [{ name: 'mine', mountPath: MOUNT.mountPath }] }, { name: 'c', image: 'busybox' },
    ], volumes: [{ name: 'mine', emptyDir: {} }] });
    await admitServiceAccount(options, on, 'ns');
    const containers = specOf(on).containers as WireObject[];
    assert.deepEqual(containers[0]?.volumeMounts, [{ name: 'mine', mountPath: MOUNT.mountPath }]);
    assert.deepEqual(containers[1]?.volumeMounts, [MOUNT]);
    assert.equal((specOf(on).volumes as unknown[]).length, 2);
  });

  void it('refuses a missing account with 403, looking for the default one ten times', async () => {
    const { options, lookups, clock } = setup({});
    const denied = admitServiceAccount(options, pod(), 'ns').then(() => undefined, (err: unknown) => err);
    await clock.advance(5_000);
    const err = await denied;
    assert.ok(err instanceof StatusError);
    assert.equal(err.httpCode, 403);
    assert.match(err.message, /pods "p" is forbidden: error looking up service account ns\/default: serviceaccount "default" not found/);
    assert.equal(lookups.length, 10);
    lookups.length = 0;
    await assert.rejects(admitServiceAccount(options, pod({ serviceAccountName: 'robot' }), 'ns'), /service account ns\/robot/);
    assert.equal(lookups.length, 1);
  });

  void it('leaves mirror pods as they are but refuses those naming an account or a secret', async () => {
    const { options, lookups } = setup({});
    const mirror = { 'orch.io/config.mirror': 'hash' };
    const p = pod({}, mirror);
    await admitServiceAccount(options, p, 'ns');
    assert.equal(specOf(p).serviceAccountName, undefined);
    assert.equal(lookups.length, 0);
    await assert.rejects(admitServiceAccount(options, pod({ serviceAccountName: 'x' }, mirror), 'ns'), /a mirror pod may not reference service accounts/);
    await assert.rejects(admitServiceAccount(options, pod({ volumes: [{ name: 's', secret: { secretName: 's' } }] }, mirror), 'ns'), /may not reference secrets/);
  });

  void it('runs as the pods definition\'s admit step', async () => {
    const { options } = setup({ 'ns/default': { metadata: { name: 'default' } } });
    const p = pod();
    await withServiceAccountAdmission(podDefinition, options).strategy.admit?.(p, { user: { name: 'u', uid: '', groups: [] }, now: new Date() }, 'ns');
    assert.equal(specOf(p).serviceAccountName, 'default');
  });
});
