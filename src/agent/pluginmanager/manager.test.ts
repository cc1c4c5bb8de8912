import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../api/fake-clock.js';
import { FakeLogger } from '../logging/testing.js';
import { waitFor } from '../../../test/helpers/wait.js';
import { createPluginManager, RECONCILE_PERIOD_MS, WATCHED_PERIOD_MS } from './manager.js';
import { FakePlugins } from './testing.js';
import type { PluginHandler, PluginManager } from './types.js';

let dir = '';
const servers: net.Server[] = [];

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'pluginmanager-'));
});

after(async () => {
  for (const s of servers) s.close();
  await rm(dir, { recursive: true, force: true });
});

/** A unix socket file at `file` (a listening server nobody talks to: the fake dialler answers). */
async function socket(file: string): Promise<net.Server> {
  await mkdir(path.dirname(file), { recursive: true });
  const server = net.createServer();
  servers.push(server);
  await new Promise<void>((resolve) => { server.listen(file, resolve); });
  return server;
}

function close(server: net.Server): Promise<void> {
  return new Promise((resolve) => { server.close(() => { resolve(); }); });
}

class RecordingHandler implements PluginHandler {
  readonly calls: string[] = [];
  refuseValidation: string | undefined;
  refuseRegistration: string | undefined;

  validatePlugin(name: string, endpoint: string, versions: readonly string[]): void {
    this.calls.push(`validate ${name} ${endpoint} ${versions.join(',')}`);
    if (this.refuseValidation !== undefined) throw new Error(this.refuseValidation);
  }

  registerPlugin(name: string, endpoint: string): Promise<void> {
    this.calls.push(`register ${name} ${endpoint}`);
    return this.refuseRegistration === undefined ? Promise.resolve() : Promise.reject(new Error(this.refuseRegistration));
  }

  deregisterPlugin(name: string, endpoint: string): void {
    this.calls.push(`deregister ${name} ${endpoint}`);
  }
}

async function harness(sub: string, watchDirs = false): Promise<{ root: string; clock: FakeClock; fakes: FakePlugins; handler: RecordingHandler; manager: PluginManager; tick: (ms?: number) => Promise<void> }> {
  const root = path.join(dir, sub);
  const clock = new FakeClock();
  const fakes = new FakePlugins();
  const handler = new RecordingHandler();
  const manager = createPluginManager({ dir: root, clock, logger: new FakeLogger(), dial: fakes.dial, watchDirs });
  manager.addHandler('DevicePlugin', handler);
  await manager.start();
  await manager.settled();
  const tick = async (ms = 1000): Promise<void> => {
    await clock.advance(ms);
    await manager.settled();
    await manager.settled();
  };
  return { root, clock, fakes, handler, manager, tick };
}

void describe('the plugin watcher', () => {
  void it('registers each socket at any depth with its handler, skipping names starting with "."; deregisters it when it goes, and again when it is made again', async () => {
    const h = await harness('lifecycle');
    const a = path.join(h.root, 'a.sock');
    const nested = path.join(h.root, 'vendor', 'deep', 'b.sock');
    h.fakes.add(a, { name: 'example.com/a' });
    const b = h.fakes.add(nested, { name: 'example.com/b', endpoint: '/run/b-api.sock', supportedVersions: ['v1alpha1', 'v1beta1'] });
    const serverA = await socket(a);
    await socket(nested);
    await socket(path.join(h.root, '.hidden.sock'));
    await h.tick();
    assert.deepEqual(h.handler.calls.sort(), [
      `register example.com/a ${a}`, 'register example.com/b /run/b-api.sock',
      `validate example.com/a ${a} v1beta1`, 'validate example.com/b /run/b-api.sock v1alpha1,v1beta1',
    ]);
    assert.deepEqual(b.notifications, [[true, '']]);
    assert.deepEqual(h.manager.registered().map((p) => p.name).sort(), ['example.com/a', 'example.com/b']);
    assert.equal(h.fakes.dials, 2, 'the hidden socket is never dialled');

    h.handler.calls.length = 0;
    await h.tick();
    assert.deepEqual(h.handler.calls, [], 'nothing changes while the sockets stay');
    await close(serverA);
    await h.tick();
    assert.deepEqual(h.handler.calls, [`deregister example.com/a ${a}`]);
    await socket(a);
    await h.tick();
    assert.deepEqual(h.handler.calls, [`deregister example.com/a ${a}`, `validate example.com/a ${a} v1beta1`, `register example.com/a ${a}`]);
    await h.manager.stop();
  });

  void it('refuses a type without a handler and a plugin its handler does not validate, telling the plugin, and tries again with back-off', async () => {
    const h = await harness('refusals');
    const csi = path.join(h.root, 'csi.sock');
    const bad = path.join(h.root, 'bad.sock');
    const csiPlugin = h.fakes.add(csi, { type: 'CSIPlugin', name: 'csi.example.com' });
    const badPlugin = h.fakes.add(bad, { name: 'orch.io/dev' });
    h.handler.refuseValidation = 'the ResourceName "orch.io/dev" is invalid';
    await socket(csi);
    await socket(bad);
    await h.tick();
    assert.deepEqual(csiPlugin.notifications, [[false, `RegisterPlugin error -- no handler registered for plugin type: CSIPlugin at socket ${csi}`]]);
    assert.deepEqual(badPlugin.notifications, [[false, 'RegisterPlugin error -- plugin validation failed with err: the ResourceName "orch.io/dev" is invalid']]);
    assert.deepEqual(h.manager.registered(), []);
    // 0.5 s after the failure, then 1 s, then 2 s.
    await h.tick(1000);
    assert.equal(badPlugin.notifications.length, 2);
    await h.tick(1000);
    assert.equal(badPlugin.notifications.length, 3);
    await h.tick(1000);
    assert.equal(badPlugin.notifications.length, 3, 'the third try waits 2 s');
    h.handler.refuseValidation = undefined;
    await h.tick(1000);
    assert.deepEqual(badPlugin.notifications.at(-1), [true, '']);
    await h.manager.stop();
  });

  void it('keeps a plugin its handler refused without trying again, and tells it why; a plugin that does not answer is retried', async () => {
    const h = await harness('handler-refused');
    const file = path.join(h.root, 'p.sock');
    const plugin = h.fakes.add(file, {});
    h.handler.refuseRegistration = 'failed to dial device plugin';
    await socket(file);
    await h.tick();
    assert.deepEqual(plugin.notifications, [[false, 'RegisterPlugin error -- plugin registration failed with err: failed to dial device plugin']]);
    await h.tick(5000);
    assert.equal(plugin.notifications.length, 1);

    const silent = path.join(h.root, 'silent.sock');
    await socket(silent);
    await h.tick();
    const dials = h.fakes.dials;
    await h.tick(1000);
    assert.ok(h.fakes.dials > dials, 'dialled again after the back-off');
    await h.manager.stop();
  });

  void it('with its directories watched, passes on their changes and otherwise every 10 s; every second while a back-off runs', async () => {
    const h = await harness('watched', true);
    assert.equal(h.clock.untilNext(), WATCHED_PERIOD_MS, 'nothing pending: the safety net only');
    const file = path.join(h.root, 'p.sock');
    const plugin = h.fakes.add(file, {});
    await socket(file);
    await waitFor('the watcher to register the new socket', async () => {
      await h.manager.settled();
      return plugin.notifications.length > 0 ? true : undefined;
    }, { timeoutMs: 10_000, intervalMs: 20 });
    assert.deepEqual(plugin.notifications, [[true, '']], 'registered with no clock tick');
    assert.equal(h.clock.untilNext(), RECONCILE_PERIOD_MS, 'the pass that started the registration ended with it under way');
    await h.tick();
    assert.equal(h.clock.untilNext(), WATCHED_PERIOD_MS, 'nothing pending again');

    const silent = path.join(h.root, 'silent.sock');
    await socket(silent);
    await waitFor('a back-off for the socket that does not answer, and passes every second', async () => {
      await h.manager.settled();
      return h.clock.untilNext() === RECONCILE_PERIOD_MS ? true : undefined;
    }, { timeoutMs: 10_000, intervalMs: 20 });
    await h.manager.stop();
  });
});
