import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, beforeEach, describe, it } from 'node:test';

import { FakeClock } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { DEFAULT_CAPABILITIES } from './driver-call.js';
import { createFlexDrivers, driverDirName, type FlexDrivers } from './drivers.js';
import { FakeFlexExec } from './testing.js';

let root: string;
let pluginDir: string;
let fake: FakeFlexExec;
let drivers: FlexDrivers | undefined;

async function install(dirName: string, content = 'v1'): Promise<string> {
  const exe = join(pluginDir, dirName, dirName.split('~').at(-1) ?? dirName);
  await mkdir(join(pluginDir, dirName), { recursive: true });
  await writeFile(exe, content);
  return exe;
}

function start(): FlexDrivers {
  drivers = createFlexDrivers({ pluginDir, exec: fake.exec, clock: new FakeClock(), logger: new FakeLogger(), callTimeoutMs: 1000 });
  return drivers;
}

beforeEach(async () => {
  drivers?.stop();
  root = await mkdtemp(join(tmpdir(), 'flex-drivers-'));
  pluginDir = join(root, 'exec');
  fake = new FakeFlexExec();
});
after(() => { drivers?.stop(); });

void describe('FlexVolume driver discovery', () => {
  void it('makes the directory, initialises each <vendor>~<driver>/<driver> with init and keeps its capabilities; skips dot directories', async () => {
    const lvm = await install('example.com~lvm');
    await install('.cache~x');
    fake.on(lvm, 'init', () => ({ status: 'Success', capabilities: { attach: false } }));
    const d = start();
    await d.start();
    const found = await d.find('example.com/lvm');
    assert.equal(found?.execPath, lvm);
    assert.equal(found.dirName, 'example.com~lvm');
    assert.deepEqual(found.capabilities, { ...DEFAULT_CAPABILITIES, attach: false });
    assert.equal((await d.find('example.com~lvm'))?.name, 'example.com/lvm');
    assert.deepEqual(d.list().map((x) => x.name), ['example.com/lvm']);
    assert.deepEqual(fake.calls.map((c) => c.args[0]), ['init']);
    await rm(root, { recursive: true, force: true });
  });

  void it('leaves out a driver whose init fails or whose executable is missing, and says why', async () => {
    const bad = await install('example.com~bad');
    await mkdir(join(pluginDir, 'example.com~empty'), { recursive: true });
    fake.on(bad, 'init', () => ({ stdout: 'usage: bad <cmd>', exitCode: 0 }));
    const d = start();
    await d.start();
    assert.equal(await d.find('example.com/bad'), undefined);
    assert.match(d.problem('example.com/bad') ?? '', /FlexVolume driver example\.com\/bad: init failed: the output is not JSON: "usage: bad <cmd>"/);
    assert.match(d.problem('example.com/empty') ?? '', /no executable .*example\.com~empty\/empty/);
    // The same executable is not initialised again on each lookup; a changed one is.
    await d.find('example.com/bad');
    assert.equal(fake.argsOf('init').length, 1);
    fake.on(bad, 'init', () => ({ status: 'Success' }));
    await writeFile(bad, 'v2, fixed');
    assert.equal((await d.find('example.com/bad'))?.capabilities.attach, true);
    await rm(root, { recursive: true, force: true });
  });

  void it('finds a driver installed after start at its first use, and forgets a removed one', async () => {
    const d = start();
    await d.start();
    assert.equal(await d.find('late.example/nfs'), undefined);
    const exe = await install('late.example~nfs');
    fake.on(exe, 'init', () => ({ status: 'Success', capabilities: { attach: false } }));
    assert.equal((await d.find('late.example/nfs'))?.execPath, exe);
    await rm(join(pluginDir, 'late.example~nfs'), { recursive: true });
    assert.equal(await d.find('late.example/nfs'), undefined);
    assert.deepEqual(d.list(), []);
    await rm(root, { recursive: true, force: true });
  });

  void it('escapes driver names as upstream', () => {
    assert.equal(driverDirName('example.com/lvm'), 'example.com~lvm');
    assert.equal(driverDirName('a~b'), 'a~b');
  });
});
