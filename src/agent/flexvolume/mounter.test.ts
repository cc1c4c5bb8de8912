import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { getgid } from 'node:process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Secret } from 'kubernetes-types/core/v1.js';

import { OrchError } from '../../api/errors.js';
import { FakeClock } from '../../api/fake-clock.js';
import type { NodePod } from '../../api/pod/index.js';
import { FakeLogger } from '../logging/testing.js';
import type { FlexVolumePlugin, FlexVolumeRequest } from '../volumes/index.js';
import { createFlexDrivers } from './drivers.js';
import { FLEXVOLUME_ATTACH_BY_CONTROLLER, FLEXVOLUME_DRIVER_NOT_FOUND, FLEXVOLUME_OUTPUT_INVALID, FLEXVOLUME_SECRET_UNAVAILABLE } from './errors.js';
import { createFlexMounter } from './mounter.js';
import { FakeFlexExec, FakeMountOps, setFakeMounted } from './testing.js';

let root: string;
let rootDir: string;
let mountInfo: string;
let fake: FakeFlexExec;
let ops: FakeMountOps;
let secrets: Map<string, Secret>;
const stops: (() => void)[] = [];

const pod = (uid: string, extra: Partial<NonNullable<NodePod['spec']>> = {}): NodePod => ({
  metadata: { uid, name: `pod-${uid}`, namespace: 'ns' },
  spec: { containers: [], serviceAccountName: 'sa', ...extra },
});
const request = (extra: Partial<FlexVolumeRequest> = {}): FlexVolumeRequest => ({
  specName: 'data', volumeName: 'data', driver: 'example.com/lvm', fsType: 'ext4', options: { size: '1G' }, secretRef: undefined, readOnly: false, subject: 'spec.volumes[0].flexVolume', ...extra,
});

/** Installs `example.com~<name>` answering init with `attach`, and a mount that mounts (in the fake mount table). */
async function install(name: string, attach: boolean): Promise<string> {
  const exe = join(root, 'exec', `example.com~${name}`, name);
  await mkdir(join(root, 'exec', `example.com~${name}`), { recursive: true });
  await writeFile(exe, '#!/bin/sh\n');
  fake.on(exe, 'init', () => ({ status: 'Success', capabilities: { attach } }));
  fake.on(exe, 'mount', async (args) => {
    await setFakeMounted(mountInfo, args[0] ?? '', true);
    return { status: 'Success' };
  });
  fake.on(exe, 'unmount', async (args) => {
    await setFakeMounted(mountInfo, args[0] ?? '', false);
    return { status: 'Success' };
  });
  return exe;
}

async function mounter(controllerAttachDetach = false, withSecrets = true): Promise<FlexVolumePlugin> {
  const drivers = createFlexDrivers({ pluginDir: join(root, 'exec'), exec: fake.exec, clock: new FakeClock(), logger: new FakeLogger(), callTimeoutMs: 1000 });
  await drivers.start();
  stops.push(() => { drivers.stop(); });
  return createFlexMounter({
    rootDir, nodeName: 'node-1', drivers, exec: fake.exec, callTimeoutMs: 1000, controllerAttachDetach, logger: new FakeLogger(), clock: new FakeClock(), mountInfoPath: mountInfo, mountOps: ops,
    ...(withSecrets ? { secrets: { secret: (namespace: string, name: string) => Promise.resolve(secrets.get(`${namespace}/${name}`)) } } : {}),
  });
}

function rejectsWith(code: string, ...includes: string[]): (err: unknown) => boolean {
  return (err) => {
    assert.ok(err instanceof OrchError, String(err));
    assert.equal(err.code, code, err.message);
    for (const text of includes) assert.ok(err.message.includes(text), `${JSON.stringify(err.message)} lacks ${JSON.stringify(text)}`);
    return true;
  };
}

const volumeDir = (uid: string, dirName = 'example.com~lvm', name = 'data'): string => join(rootDir, 'pods', uid, 'volumes', dirName, name);

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'flex-mounter-')));
  rootDir = join(root, 'root');
  mountInfo = join(root, 'mountinfo');
  await writeFile(mountInfo, '');
  fake = new FakeFlexExec();
  ops = new FakeMountOps(mountInfo);
  secrets = new Map();
});
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  await rm(root, { recursive: true, force: true });
});

void describe('FlexVolume mounts', () => {
  void it('mounts into <pod>/volumes/<vendor>~<driver>/<name> with upstream\'s options renamed, once', async () => {
    const exe = await install('lvm', false);
    secrets.set('ns/creds', { type: 'example.com/lvm', data: { user: Buffer.from('admin').toString('base64') } });
    const m = await mounter();
    const dir = await m.setUp(pod('u1', { securityContext: { fsGroup: 2000 } }), 'u1', request({ secretRef: { name: 'creds' } }));
    assert.equal(dir, volumeDir('u1'));
    const [mount] = fake.argsOf('mount');
    assert.equal(mount?.[1], dir);
    assert.deepEqual(JSON.parse(mount[2] ?? ''), {
      'orch.io/fsType': 'ext4', 'orch.io/readwrite': 'rw', 'orch.io/pvOrVolumeName': 'data',
      'orch.io/pod.name': 'pod-u1', 'orch.io/pod.namespace': 'ns', 'orch.io/pod.uid': 'u1', 'orch.io/serviceAccount.name': 'sa',
      'orch.io/secret/user': Buffer.from('admin').toString('base64'), 'orch.io/mounterArgs.FsGroup': '2000', size: '1G',
    });
    assert.equal(fake.calls.filter((c) => c.file === exe && c.args[0] !== 'init').length, 1);
    // Again (the next sync), and after a restart (a new mounter; the directory is a mount point): no second mount.
    assert.equal(await m.setUp(pod('u1'), 'u1', request({ secretRef: { name: 'creds' } })), dir);
    assert.equal(await (await mounter()).setUp(pod('u1'), 'u1', request({ secretRef: { name: 'creds' } })), dir);
    assert.equal(fake.argsOf('mount').length, 1);
  });

  void it('refuses a missing driver, or a secret that is missing or not of the driver\'s type, touching nothing', async () => {
    await install('lvm', false);
    const m = await mounter();
    await assert.rejects(m.setUp(pod('u1'), 'u1', request({ driver: 'example.com/nope' })), rejectsWith(FLEXVOLUME_DRIVER_NOT_FOUND, 'volume "data": FlexVolume driver example.com/nope is not installed'));
    await assert.rejects(m.setUp(pod('u1'), 'u1', request({ secretRef: { name: 'creds' } })), rejectsWith(FLEXVOLUME_SECRET_UNAVAILABLE, 'secret ns/creds not found'));
    secrets.set('other/creds', { type: 'Opaque', data: {} });
    await assert.rejects(m.setUp(pod('u1'), 'u1', request({ secretRef: { name: 'creds', namespace: 'other' } })), rejectsWith(FLEXVOLUME_SECRET_UNAVAILABLE, 'has type "Opaque"', 'example.com/lvm'));
    await assert.rejects((await mounter(false, false)).setUp(pod('u1'), 'u1', request({ secretRef: { name: 'creds' } })), rejectsWith(FLEXVOLUME_SECRET_UNAVAILABLE, 'without an API server'));
    assert.deepEqual(fake.argsOf('mount'), []);
    assert.equal(existsSync(volumeDir('u1')), false);
  });

  void it('after a mount that answers garbage, undoes what the driver mounted and removes the directory', async () => {
    const exe = await install('lvm', false);
    fake.on(exe, 'mount', async (args) => {
      await setFakeMounted(mountInfo, args[0] ?? '', true);
      return { stdout: 'mounted!' };
    });
    const m = await mounter();
    await assert.rejects(m.setUp(pod('u1'), 'u1', request()), rejectsWith(FLEXVOLUME_OUTPUT_INVALID, 'volume "data": FlexVolume driver example.com/lvm: mount failed: the output is not JSON: "mounted!"'));
    assert.deepEqual(ops.calls, [`umount ${volumeDir('u1')}`]);
    assert.equal(existsSync(volumeDir('u1')), false);
  });

  void it('bind-mounts the device mount path when mount is not supported (upstream\'s default)', async () => {
    const exe = await install('lvm', false);
    fake.on(exe, 'mount', () => ({ status: 'Not supported' }));
    await (await mounter()).setUp(pod('u1'), 'u1', request());
    assert.deepEqual(ops.calls, [`bind ${join(rootDir, 'plugins', 'orch.io', 'flexvolume', 'example.com', 'lvm', 'mounts', 'data')} ${volumeDir('u1')}`]);
  });

  void it('applies the pod\'s fsGroup to the mounted directory when the driver says fsGroup (the default), not when read-only or fsGroup false', async () => {
    const gid = getgid?.() ?? 0;
    const exe = await install('lvm', false);
    const m = await mounter();
    const dir = await m.setUp(pod('g1', { securityContext: { fsGroup: gid } }), 'g1', request());
    assert.equal((await stat(dir)).mode & 0o2070, 0o2070);
    assert.equal((await stat(await m.setUp(pod('g2', { securityContext: { fsGroup: gid } }), 'g2', request({ readOnly: true })))).mode & 0o2000, 0, 'read-only');
    fake.on(exe, 'init', () => ({ status: 'Success', capabilities: { attach: false, fsGroup: false } }));
    const noGroup = await mounter();
    assert.equal((await stat(await noGroup.setUp(pod('g3', { securityContext: { fsGroup: gid } }), 'g3', request()))).mode & 0o2000, 0, 'fsGroup: false');
  });

  void it('tears a pod\'s volumes down: unmount, the directory removed; other plugins\' directories left to the volume manager', async () => {
    await install('lvm', false);
    const m = await mounter();
    const dir = await m.setUp(pod('u1'), 'u1', request());
    await mkdir(join(rootDir, 'pods', 'u1', 'volumes', 'orch.io~empty-dir', 'scratch'), { recursive: true });
    await m.tearDown('u1');
    assert.deepEqual(fake.argsOf('unmount'), [['unmount', dir]]);
    assert.equal(existsSync(dir), false);
    assert.equal(existsSync(join(rootDir, 'pods', 'u1', 'volumes', 'orch.io~empty-dir', 'scratch')), true);
    await m.tearDown('u1');
    await m.tearDown('gone');
    assert.equal(fake.argsOf('unmount').length, 1);
  });
});

void describe('FlexVolume drivers that attach', () => {
  void it('attach, waitforattach and mountdevice on the node before mount when the agent attaches; unmountdevice and detach after the last pod', async () => {
    const exe = await install('lvm', true);
    fake.on(exe, 'attach', () => ({ status: 'Success', device: '/dev/fake1' }));
    fake.on(exe, 'waitforattach', (args) => ({ status: 'Success', device: args[0] ?? '' }));
    fake.on(exe, 'mountdevice', async (args) => {
      await setFakeMounted(mountInfo, args[0] ?? '', true);
      return { status: 'Success' };
    });
    fake.on(exe, 'unmountdevice', async (args) => {
      await setFakeMounted(mountInfo, args[0] ?? '', false);
      return { status: 'Success' };
    });
    fake.on(exe, 'detach', () => ({ status: 'Success' }));
    const m = await mounter(false);
    await m.setUp(pod('u1'), 'u1', request());
    await m.setUp(pod('u2'), 'u2', request());
    const deviceMountPath = join(rootDir, 'plugins', 'orch.io', 'flexvolume', 'example.com', 'lvm', 'mounts', 'data');
    const calls = fake.calls.filter((c) => c.args[0] !== 'init').map((c) => c.args.slice(0, 3));
    const json = JSON.stringify({ 'orch.io/fsType': 'ext4', 'orch.io/readwrite': 'rw', 'orch.io/pvOrVolumeName': 'data', size: '1G' });
    assert.deepEqual(calls.slice(0, 4), [
      ['attach', json, 'node-1'],
      ['waitforattach', '/dev/fake1', json],
      ['mountdevice', deviceMountPath, '/dev/fake1'],
      ['mount', volumeDir('u1'), calls[3]?.[2] ?? ''],
    ]);
    // The second pod: attach and waitforattach again (idempotent, as upstream), no second mountdevice.
    assert.deepEqual(calls.slice(4).map((c) => c[0]), ['attach', 'waitforattach', 'mount']);
    await m.tearDown('u1');
    assert.deepEqual(fake.argsOf('detach'), []);
    await m.tearDown('u2');
    assert.deepEqual(fake.argsOf('unmountdevice'), [['unmountdevice', deviceMountPath]]);
    assert.deepEqual(fake.argsOf('detach'), [['detach', 'data', 'node-1']]);
    assert.equal(existsSync(deviceMountPath), false);
  });

  void it('refuses, naming the setting, when enableControllerAttachDetach leaves attaching to a controller', async () => {
    await install('lvm', true);
    await assert.rejects((await mounter(true)).setUp(pod('u1'), 'u1', request()), rejectsWith(FLEXVOLUME_ATTACH_BY_CONTROLLER, 'volume "data"', 'enableControllerAttachDetach'));
    assert.deepEqual(fake.argsOf('attach'), []);
  });
});
