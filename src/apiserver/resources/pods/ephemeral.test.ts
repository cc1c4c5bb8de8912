import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ResourceRegistry, type StrategyContext, type WireObject } from '../../registry/index.js';
import { StatusError } from '../../status/index.js';
import { openSqliteStore, type ManagedStore } from '../../storage/index.js';
import { podDefinition } from './index.js';
import { syncedTmpdir } from '../../../../test/helpers/tempdir.js';

const ctx: StrategyContext = { user: { name: 'admin', uid: '', groups: ['system:masters'] }, now: new Date('2030-01-01T00:00:00Z') };
const debug = { name: 'debugger', image: 'busybox:1.35', targetContainerName: 'app', stdin: true, tty: true };

void describe('pods/ephemeralcontainers', () => {
  let dir: string;
  let store: ManagedStore;
  let pods: ResourceRegistry;
  const failure = async (p: Promise<unknown>): Promise<string> => p.then(() => 'ok', (err: unknown) => (err instanceof StatusError ? `${err.httpCode} ${err.message}` : String(err)));
  const ephemeralOf = (pod: WireObject): WireObject[] => ((pod.spec as WireObject).ephemeralContainers ?? []) as WireObject[];

  before(async () => {
    dir = mkdtempSync(join(syncedTmpdir(), 'ephemeral-'));
    store = await openSqliteStore({ dataDir: dir, compactionIntervalMs: 3_600_000 });
    pods = new ResourceRegistry({ def: podDefinition, store });
    await pods.create(ctx, 'ns', { metadata: { name: 'web' }, spec: { containers: [{ name: 'app', image: 'busybox:1.35' }] } }, { dryRun: false });
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  void it('adds an ephemeral container through a strategic merge patch, defaulted, and nothing else of the patch', async () => {
    const patched = (await pods.patch(ctx, 'ns', 'web', 'strategic', { metadata: { labels: { sneaky: 'yes' } }, spec: { ephemeralContainers: [debug], activeDeadlineSeconds: 5 } }, { dryRun: false, subresource: 'ephemeralcontainers' })).object;
    const [added] = ephemeralOf(patched);
    assert.deepEqual([added?.name, added?.targetContainerName, added?.imagePullPolicy, added?.terminationMessagePath], ['debugger', 'app', 'IfNotPresent', '/dev/termination-log']);
    assert.equal((patched.metadata as WireObject).labels, undefined);
    assert.equal((patched.spec as WireObject).activeDeadlineSeconds, undefined);
  });

  void it('refuses removing or changing one, and what an ephemeral container may not have', async () => {
    const current = await pods.get('ns', 'web');
    const update = (list: unknown[]): Promise<unknown> => pods.update(ctx, 'ns', 'web', { ...current, spec: { ...(current.spec as WireObject), ephemeralContainers: list } }, { dryRun: false, subresource: 'ephemeralcontainers' });
    assert.match(await failure(update([])), /^422 .*spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be removed/);
    assert.match(await failure(update([{ ...ephemeralOf(current)[0], image: 'busybox:latest' }])), /may not be changed/);
    const more = (extra: WireObject): Promise<string> => failure(update([...ephemeralOf(current), { name: 'second', image: 'busybox:1.35', ...extra }]));
    assert.match(await more({ ports: [{ containerPort: 80 }] }), /spec.ephemeralContainers\[1\].ports: .*must not be set for an ephemeral container/);
    assert.match(await more({ readinessProbe: { exec: { command: ['true'] } } }), /readinessProbe: .*must not be set/);
    assert.match(await more({ resources: { limits: { cpu: '1' } } }), /resources: .*must not be set/);
    assert.match(await more({ targetContainerName: 'nope' }), /targetContainerName: .*"nope" is not a container of this pod/);
    assert.match(await more({ name: 'app' }), /spec.ephemeralContainers\[1\].name: .*already the name of a container/);
    assert.equal(await more({}), 'ok');
  });

  void it('cannot be changed through the pod itself, which still takes other updates', async () => {
    const current = await pods.get('ns', 'web');
    const spec = current.spec as WireObject;
    assert.match(await failure(pods.update(ctx, 'ns', 'web', { ...current, spec: { ...spec, ephemeralContainers: [] } }, { dryRun: false })), /^422 .*pod updates may not change fields/);
    const labelled = (await pods.patch(ctx, 'ns', 'web', 'merge', { metadata: { labels: { debugged: 'true' } } }, { dryRun: false })).object;
    assert.equal(((labelled.metadata as WireObject).labels as WireObject).debugged, 'true');
    assert.equal(ephemeralOf(labelled).length, 2);
  });

  void it('is described with get, patch and update', () => {
    assert.deepEqual(podDefinition.subresources?.find((s) => s.name === 'ephemeralcontainers')?.verbs, ['get', 'patch', 'update']);
  });
});
